package auth

import "testing"

func TestBearerToken(t *testing.T) {
	cases := []struct {
		header, token string
		ok            bool
	}{
		{"Bearer tok_abc123", "tok_abc123", true},
		{"Bearer svc_abc123", "svc_abc123", true},
		{"bearer tok_abc", "tok_abc", true},
		{"BEARER  tok_abc ", "tok_abc", true},
		{"", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"tok_abc", "", false},
		{"Bearer tok_", "", false},
		{"Bearer abc_123", "", false},
		{"Bearer TOK_abc", "", false},
		{"Bearer tok_a b", "", false},
		{"Bearer tok_a\x00b", "", false},
		{"Bearer tok_é", "", false},
		{"Bearer svc_" + string(make([]byte, 600)), "", false},
	}
	for _, tc := range cases {
		tok, ok := BearerToken(tc.header)
		if tok != tc.token || ok != tc.ok {
			t.Errorf("%q: got %q %v, want %q %v", tc.header, tok, ok, tc.token, tc.ok)
		}
	}
}
