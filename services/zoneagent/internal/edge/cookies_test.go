package edge

import (
	"net/http"
	"slices"
	"testing"
)

func TestDropSharedCookies(t *testing.T) {
	for _, tc := range []struct {
		line string
		drop bool
	}{
		{"sid=1; Path=/; Domain=apps.example.com", true},
		{"sid=1; Domain=.apps.example.com; Secure", true},
		{"sid=1; domain=APPS.EXAMPLE.COM.", true},
		{"sid=1; Domain=example.com", true}, // a parent: every app too
		{"sid=1; Domain=com", true},         // browsers refuse it; so do we
		{"sid=1; Domain = apps.example.com", true},
		{"sid=1; Domain=a.apps.example.com; Domain=apps.example.com", true},
		{"sid=1; Path=/; HttpOnly", false},              // host-only
		{"sid=1; Domain=a.apps.example.com", false},     // the app's own host
		{"sid=1; Domain=notapps.example.com", false},    // not a parent
		{"sid=1; Domain=shop.customer.example", false},  // a custom hostname's own
		{"sid=1; Path=/domain=apps.example.com", false}, // not a Domain attribute
	} {
		h := http.Header{}
		h.Add("Set-Cookie", "keep=1; Path=/")
		h.Add("Set-Cookie", tc.line)
		h.Add("Set-Cookie", "keep2=1")
		dropped := DropSharedCookies(h, "apps.example.com")
		want := []string{"keep=1; Path=/", tc.line, "keep2=1"}
		if tc.drop {
			want = []string{"keep=1; Path=/", "keep2=1"}
			if !slices.Equal(dropped, []string{"sid"}) {
				t.Errorf("%q: dropped %v", tc.line, dropped)
			}
		} else if dropped != nil {
			t.Errorf("%q: dropped %v", tc.line, dropped)
		}
		if got := h.Values("Set-Cookie"); !slices.Equal(got, want) {
			t.Errorf("%q: left %q, want %q", tc.line, got, want)
		}
	}
}
