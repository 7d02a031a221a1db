package auth

import (
	"strings"
	"testing"
)

func TestPKCES256(t *testing.T) {
	// RFC 7636 Appendix B.
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if got := ChallengeS256(verifier); got != challenge {
		t.Fatalf("ChallengeS256 = %q, want %q", got, challenge)
	}
	cases := []struct {
		name, verifier, challenge string
		want                      bool
	}{
		{"rfc vector", verifier, challenge, true},
		{"other verifier", strings.Repeat("a", 43), challenge, false},
		{"plain method value", verifier, verifier, false},
		{"too short", "abc", ChallengeS256("abc"), false},
		{"too long", strings.Repeat("a", 129), ChallengeS256(strings.Repeat("a", 129)), false},
		{"bad character", strings.Repeat("a", 42) + "!", ChallengeS256(strings.Repeat("a", 42) + "!"), false},
		{"longest valid", strings.Repeat("~", 128), ChallengeS256(strings.Repeat("~", 128)), true},
	}
	for _, tc := range cases {
		if got := VerifyS256(tc.verifier, tc.challenge); got != tc.want {
			t.Errorf("%s: VerifyS256 = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestValidChallenge(t *testing.T) {
	cases := map[string]bool{
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM":  true,
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=": false, // padded
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM":  false, // standard alphabet
		"short": false,
		"":      false,
	}
	for c, want := range cases {
		if got := ValidChallenge(c); got != want {
			t.Errorf("ValidChallenge(%q) = %v, want %v", c, got, want)
		}
	}
}
