package apps

import "tori.dev/contract/names"

// reserved slugs name the product's own hosts; they are "taken" rather than invalid, as the
// contract says.
var reserved = map[string]bool{
	"api": true, "console": true, "admin": true, "www": true, "tori": true, "enroll": true, "my": true,
}

// ValidSlug reports whether s has the slug shape: the contract's (names.SlugPattern), which
// identity, the command line and the console hold a slug to as well.
func ValidSlug(s string) bool { return names.ValidSlug(s) }

// CheckRequestedSlug applies rules 2 and 3 of POST /api/apps to a name the caller chose.
func CheckRequestedSlug(s string) error {
	if !ValidSlug(s) {
		return ErrInvalidSlug
	}
	if reserved[s] {
		return ErrSlugTaken
	}
	return nil
}
