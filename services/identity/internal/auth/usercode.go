package auth

import (
	"crypto/rand"
	"math/big"
	"strings"
)

// UserCodeAlphabet is what user codes are made of: consonants and digits that cannot be
// mistaken for one another when read off a terminal and typed into a browser (no 0/O, 1/I/L,
// 8/B), and no vowels, so no code spells a word. 27 symbols in 8 places give about 2^38
// codes, plenty for the few grants alive in a 10-minute window.
const UserCodeAlphabet = "BCDFGHJKMNPQRSTVWXYZ2345679"

const userCodeLen = 8

// NewUserCode makes a code shaped like WXYZ-2345.
func NewUserCode() string {
	var b strings.Builder
	n := big.NewInt(int64(len(UserCodeAlphabet)))
	for i := 0; i < userCodeLen; i++ {
		if i == userCodeLen/2 {
			b.WriteByte('-')
		}
		// crypto/rand.Int fails only when the system's randomness does, which Go treats as fatal.
		k, _ := rand.Int(rand.Reader, n)
		b.WriteByte(UserCodeAlphabet[k.Int64()])
	}
	return b.String()
}

// NormalizeUserCode accepts what a person types (any case, with or without the dash or
// spaces) and returns the canonical form the code was issued in.
func NormalizeUserCode(s string) (string, error) {
	s = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(s))
	if len(s) != userCodeLen {
		return "", ErrInvalidUserCode
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(UserCodeAlphabet, s[i]) < 0 {
			return "", ErrInvalidUserCode
		}
	}
	return s[:userCodeLen/2] + "-" + s[userCodeLen/2:], nil
}
