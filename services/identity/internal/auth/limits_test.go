package auth

import (
	"errors"
	"testing"
)

func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"99 tokens: one more", MayMintToken(99), true},
		{"100 tokens: no more", MayMintToken(100), false},
		{"101 tokens: no more", MayMintToken(101), false},
		{"4 mails: one more", MayMailMagicLink(4), true},
		{"5 mails: no more", MayMailMagicLink(5), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if err := error(&TokenLimitError{Limit: 100, Plan: "nestling"}); !errors.Is(err, ErrTokenLimit) {
		t.Fatal("TokenLimitError is not ErrTokenLimit")
	}
}
