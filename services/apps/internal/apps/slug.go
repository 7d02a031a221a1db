package apps

import "regexp"

var slugRe = regexp.MustCompile(`^[a-z0-9-]{1,63}$`)

// reserved slugs name the product's own hosts; they are "taken" rather than invalid, as the
// contract says.
var reserved = map[string]bool{
	"api": true, "console": true, "admin": true, "www": true, "tori": true, "enroll": true, "my": true,
}

// ValidSlug reports whether s has the slug shape.
func ValidSlug(s string) bool { return slugRe.MatchString(s) }

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
