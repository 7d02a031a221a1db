package auth

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"time"
)

func TestSecrets(t *testing.T) {
	for _, prefix := range []string{SessionPrefix, APIPrefix, ""} {
		a, b := NewSecret(prefix), NewSecret(prefix)
		if !strings.HasPrefix(a.Plain, prefix) || len(a.Plain) != len(prefix)+43 {
			t.Errorf("secret %q: want prefix %q and 43 random characters", a.Plain, prefix)
		}
		if a.Plain == b.Plain {
			t.Errorf("two secrets are equal")
		}
		sum := sha256.Sum256([]byte(a.Plain))
		if !bytes.Equal(a.Hash, sum[:]) || !bytes.Equal(Hash(a.Plain), a.Hash) {
			t.Errorf("hash is not SHA-256 of the secret")
		}
		if bytes.Contains(a.Hash, []byte(a.Plain)) {
			t.Errorf("hash holds the secret")
		}
	}
}

func TestDisplayPrefixAndKind(t *testing.T) {
	cases := []struct{ token, prefix, kind string }{
		{"svc_AbCdEfGh123", "svc_AbCd", KindAPI},
		{"tok_ZyXwVu", "tok_ZyXw", KindSession},
		{"abc", "abc", ""},
		{"Bearer svc_x", "Bearer s", ""},
	}
	for _, tc := range cases {
		if got := DisplayPrefix(tc.token); got != tc.prefix {
			t.Errorf("DisplayPrefix(%q) = %q, want %q", tc.token, got, tc.prefix)
		}
		if got := Kind(tc.token); got != tc.kind {
			t.Errorf("Kind(%q) = %q, want %q", tc.token, got, tc.kind)
		}
	}
	tok, secret := NewAPIToken("a", "u", "ci", time.Now())
	if tok.Prefix != secret[:8] || !strings.HasPrefix(tok.Prefix, APIPrefix) || len(tok.Prefix) != 8 {
		t.Fatalf("prefix %q is not the first 8 characters of the secret", tok.Prefix)
	}
}

func TestParseTokenName(t *testing.T) {
	cases := map[string]bool{"laptop": true, "  ci  ": true, "": false, "   ": false,
		strings.Repeat("é", 100): true, strings.Repeat("x", 101): false, "bad\xff": false}
	for in, ok := range cases {
		if _, err := ParseTokenName(in); (err == nil) != ok {
			t.Errorf("ParseTokenName(%q): err %v, want ok=%v", in, err, ok)
		}
	}
}

func TestLastUsedThrottle(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	cases := []struct {
		name string
		last *time.Time
		now  time.Time
		want bool
	}{
		{"never used", nil, t0, true},
		{"just now", &t0, t0.Add(59 * time.Second), false},
		{"a minute ago", &t0, t0.Add(time.Minute), true},
	}
	for _, tc := range cases {
		tok := APIToken{LastUsedAt: tc.last}
		if got := tok.NeedsTouch(tc.now); got != tc.want {
			t.Errorf("%s: NeedsTouch = %v, want %v", tc.name, got, tc.want)
		}
	}
}
