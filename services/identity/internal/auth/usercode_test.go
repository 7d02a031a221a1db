package auth

import (
	"errors"
	"regexp"
	"testing"
)

var userCodeRe = regexp.MustCompile(`^[` + UserCodeAlphabet + `]{4}-[` + UserCodeAlphabet + `]{4}$`)

func TestNewUserCodeFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		c := NewUserCode()
		if !userCodeRe.MatchString(c) {
			t.Fatalf("user code %q is not like WXYZ-2345 in the unambiguous alphabet", c)
		}
		seen[c] = true
	}
	if len(seen) < 1990 {
		t.Fatalf("only %d distinct codes in 2000 draws", len(seen))
	}
}

func TestAlphabetIsUnambiguous(t *testing.T) {
	for _, c := range "0O1IL8AEU" {
		if regexp.MustCompile(string(c)).MatchString(UserCodeAlphabet) {
			t.Errorf("alphabet holds %q, which is easily misread or makes words", c)
		}
	}
}

func TestNormalizeUserCode(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"WXYZ-2345", "WXYZ-2345"},
		{"wxyz-2345", "WXYZ-2345"},
		{"WXYZ2345", "WXYZ-2345"},
		{" wx yz 23 45 ", "WXYZ-2345"},
		{"WXYZ-234", ""},   // too short
		{"WXYZ-23456", ""}, // too long
		{"WXYZ-2340", ""},  // 0 is not in the alphabet
		{"AXYZ-2345", ""},  // nor vowels
		{"", ""},
	}
	for _, tc := range cases {
		got, err := NormalizeUserCode(tc.in)
		if tc.want == "" {
			if !errors.Is(err, ErrInvalidUserCode) {
				t.Errorf("%q: want ErrInvalidUserCode, got %q %v", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}
