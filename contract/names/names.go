// Package names is the contract's names and their patterns: what an app's slug and a custom
// hostname may be, and how a hostname's verification record is named and valued. The apps
// service gives out no other, identity mails about no other, the command line holds a name
// to the slug's pattern before it asks, and the console's form carries the same pattern
// (generated into console/src/api/contract.ts by tools/contractgen).
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
