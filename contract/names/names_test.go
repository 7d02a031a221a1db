package names

import (
	"strings"
	"testing"
)

func TestSlugs(t *testing.T) {
	for _, tc := range []struct {
		slug string
		ok   bool
	}{
		{"a", true}, {"my-app", true}, {"0day", true}, {strings.Repeat("a", SlugMaxLen), true},
		// The pattern the API names: a leading or trailing hyphen is a slug too, and every
		// process takes it (identity once refused its mails, #37).
		{"-abc", true}, {"abc-", true}, {"-", true},
		{"", false}, {strings.Repeat("a", SlugMaxLen+1), false}, {"My-App", false}, {"my_app", false},
		{"my.app", false}, {"my app", false}, {"é", false}, {"app\n", false}, {"\napp", false},
	} {
		if got := ValidSlug(tc.slug); got != tc.ok {
			t.Errorf("ValidSlug(%q) = %v, want %v", tc.slug, got, tc.ok)
		}
	}
}
