package account

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseEmail(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ada@example.com", "ada@example.com"},
		{"  Ada.Lovelace+tori@Example.COM ", "ada.lovelace+tori@example.com"},
		{"a@b.co", "a@b.co"},

		{"", ""},
		{"ada", ""},
		{"ada@", ""},
		{"@example.com", ""},
		{"ada@localhost", ""}, // no dot: not deliverable on the internet
		{"ada@example..com", ""},
		{"ada@.example.com", ""},
		{"Ada <ada@example.com>", ""}, // a display name is not a bare address
		{"ada@example.com, bob@example.com", ""},
		{"ada@example.com\r\nBcc: eve@example.com", ""}, // header injection
		{`"ada lovelace"@example.com`, ""},
		{"ada@exa mple.com", ""},
		{strings.Repeat("a", 250) + "@example.com", ""},
	}
	for _, tc := range cases {
		got, err := ParseEmail(tc.in)
		if tc.want == "" {
			if !errors.Is(err, ErrInvalidEmail) {
				t.Errorf("%q: want ErrInvalidEmail, got %q %v", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestNewAccount(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	a, u := New("ada.lovelace@example.com", now)
	if a.DefaultRegion != RegionEU || u.AccountID != a.ID || u.Name != "ada.lovelace" || u.Email != "ada.lovelace@example.com" {
		t.Fatalf("new account %+v user %+v", a, u)
	}
	if a.ID == u.ID || len(a.ID) != 36 {
		t.Fatalf("ids %q %q", a.ID, u.ID)
	}
}

func TestRegion(t *testing.T) {
	for in, want := range map[string]bool{"eu": true, "us": true, "EU": false, "asia": false, "": false} {
		if _, ok := ParseRegion(in); ok != want {
			t.Errorf("ParseRegion(%q) ok=%v, want %v", in, ok, want)
		}
	}
	now := time.Now()
	a := Account{DefaultRegion: RegionEU}
	if a.SetRegion(RegionEU, now) {
		t.Error("setting the same region is no change")
	}
	if !a.SetRegion(RegionUS, now) || a.DefaultRegion != RegionUS || !a.UpdatedAt.Equal(now) {
		t.Error("region change not applied")
	}
}
