package apps

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestCheckRequestedSlug(t *testing.T) {
	cases := []struct {
		slug string
		want error
	}{
		{"my-app", nil}, {"a", nil}, {"0", nil}, {"-", nil}, {"-abc", nil}, {"abc-", nil}, {"a1-b2", nil}, {strings.Repeat("a", 63), nil},
		{"", ErrInvalidSlug}, {strings.Repeat("a", 64), ErrInvalidSlug}, {"My-App", ErrInvalidSlug},
		{"my_app", ErrInvalidSlug}, {"my.app", ErrInvalidSlug}, {"my app", ErrInvalidSlug}, {"é", ErrInvalidSlug},
		{"api", ErrSlugTaken}, {"console", ErrSlugTaken}, {"admin", ErrSlugTaken}, {"www", ErrSlugTaken},
		{"tori", ErrSlugTaken}, {"enroll", ErrSlugTaken}, {"my", ErrSlugTaken}, {"apis", nil}, {"my-app-api", nil},
	}
	for _, c := range cases {
		if got := CheckRequestedSlug(c.slug); !errors.Is(got, c.want) || (c.want == nil && got != nil) {
			t.Errorf("CheckRequestedSlug(%q) = %v, want %v", c.slug, got, c.want)
		}
	}
}

func TestWordListsMakeValidDistinctSlugs(t *testing.T) {
	if len(adjectives) < 100 || len(birds) < 100 {
		t.Fatalf("%d adjectives × %d birds; want at least 100 each", len(adjectives), len(birds))
	}
	word := regexp.MustCompile(`^[a-z]+$`)
	for name, list := range map[string][]string{"adjectives": adjectives, "birds": birds} {
		seen := map[string]bool{}
		for _, w := range list {
			if !word.MatchString(w) || seen[w] {
				t.Errorf("%s: %q is not a unique lower-case word", name, w)
			}
			seen[w] = true
		}
	}
	for i := 1; i <= MaxSlugAttempts; i++ {
		s := GenerateSlug(i)
		if err := CheckRequestedSlug(s); err != nil {
			t.Errorf("generated %q: %v", s, err)
		}
		if i <= suffixAfter && !regexp.MustCompile(`^[a-z]+-[a-z]+$`).MatchString(s) {
			t.Errorf("attempt %d: %q is not adjective-bird", i, s)
		}
		if i > suffixAfter && !regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9]{4}$`).MatchString(s) {
			t.Errorf("attempt %d: %q lacks the widening suffix", i, s)
		}
	}
}

func TestKindAndRegion(t *testing.T) {
	for in, want := range map[string]string{"": "static", "service": "service", "static": "static", "Service": "static", "worker": "static"} {
		if got := KindFor(in); got != want {
			t.Errorf("KindFor(%q) = %q, want %q", in, got, want)
		}
	}
	for r, want := range map[string]bool{"eu": true, "us": true, "EU": false, "": false, "asia": false} {
		if ValidRegion(r) != want {
			t.Errorf("ValidRegion(%q) != %v", r, want)
		}
	}
}
