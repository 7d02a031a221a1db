// Package names is the contract's names and their patterns: what an app's slug, a custom
// hostname and an environment variable may be called, and how a hostname's verification
// record is named and valued. The apps service takes or gives out no other, identity mails
// about no other, the command line holds a name to the same rule before it asks, and the
// console's forms carry the same patterns (generated into console/src/api/contract.ts by
// tools/contractgen).
package names

import "regexp"

// SlugPattern is an app slug's shape (API "Limits", "App slug"): lowercase letters, digits
// and hyphens, 1 to 63 of them, so <slug>.<APPS_DOMAIN> is one DNS label long at most.
const SlugPattern = `^[a-z0-9-]{1,63}$`

// SlugMaxLen is the longest slug SlugPattern accepts.
const SlugMaxLen = 63

var slugShape = regexp.MustCompile(SlugPattern)

// ValidSlug reports whether s is a slug.
func ValidSlug(s string) bool { return slugShape.MatchString(s) }
