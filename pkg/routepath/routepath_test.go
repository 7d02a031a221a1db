package routepath

import "testing"

func TestMatches(t *testing.T) {
	cases := []struct {
		template, path string
		want           bool
	}{
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/verify", true},
		// Fiber's defaults: static segments in any case, one trailing slash.
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/verify/", true},
		{"/api/auth/magic-link/verify", "/API/Auth/Magic-Link/VERIFY", true},
		{"/api/auth/magic-link/verify", "/api/auth/MAGIC-LINK/verify/", true},
		{"/api/auth/magic-link/verify", "api/auth/magic-link/verify", true},
		// One trailing slash only, and nothing else normalised.
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/verify//", false},
		{"/api/auth/magic-link/verify", "/api/auth/magic-link//verify", false},
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/./verify", false},
		{"/api/auth/magic-link/verify", "/api/auth/x/../magic-link/verify", false},
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/%76erify", false}, // raw, as Fiber routes it
		{"/api/auth/magic-link/verify", "/api/auth/magic-link", false},
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/verify/x", false},
		{"/api/auth/magic-link/verify", "/api/auth/magic-link/verifyx", false},
		{"/api/auth/magic-link/verify", "", false},
		// Parameters take any one segment, in any case, and never an empty one.
		{"/api/apps/{slug}", "/api/apps/Blue-Bird", true},
		{"/api/apps/{slug}", "/Api/APPS/b/", true},
		{"/api/apps/{slug}", "/api/apps/", false},
		{"/api/apps/{slug}", "/api/apps//", false},
		{"/api/apps/{slug}", "/api/apps/b/c", false},
		{"/", "/", true},
		{"/", "", true},
		{"/", "/x", false},
	}
	for _, c := range cases {
		if got := Parse(c.template).Matches(c.path); got != c.want {
			t.Errorf("%q matches %q: %v, want %v", c.template, c.path, got, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	for p, want := range map[string]bool{
		"": true, "api/apps": true, "api/apps/b": true,
		"api//apps": false, "api/./apps": false, "api/../apps": false, "/api": false, "api/": false,
	} {
		if got := Clean(p); got != want {
			t.Errorf("Clean(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestMatchesTrimmedDoesNotAllocate(t *testing.T) {
	tpl := Parse("/api/apps/{slug}/logs/stream")
	if n := testing.AllocsPerRun(100, func() { tpl.MatchesTrimmed("api/apps/b/logs/stream") }); n != 0 {
		t.Fatalf("%v allocations a match", n)
	}
}
