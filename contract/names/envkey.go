package names

import "regexp"

// EnvKeyPattern is an environment variable's name (API "Limits", "Environment variable
// name"): a capital letter, then capital letters, digits and underscores.
const EnvKeyPattern = `^[A-Z][A-Z0-9_]*$`

// EnvKeyMaxLen bounds a name: the API gives only its pattern, and no process environment
// needs longer names.
const EnvKeyMaxLen = 256

var envKeyShape = regexp.MustCompile(EnvKeyPattern)

// ValidEnvKey reports whether k is a variable's name: EnvKeyPattern, at most EnvKeyMaxLen long.
func ValidEnvKey(k string) bool { return len(k) <= EnvKeyMaxLen && envKeyShape.MatchString(k) }
