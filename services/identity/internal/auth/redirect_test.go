package auth

import (
	"errors"
	"testing"
)

func TestParseRedirectURI(t *testing.T) {
	cases := []struct {
		uri string
		ok  bool
	}{
		{"http://127.0.0.1:8976/callback", true},
		{"http://[::1]:8976/callback", true},
		{"http://localhost:8976/callback", true},
		{"http://localhost:8976/", true},
		{"http://127.0.0.1:1/a/b?x=1", true},
		{"http://127.0.0.1:65535/cb", true},

		{"", false},
		{"https://127.0.0.1:8976/callback", false},   // only http: no certificate on a loopback listener
		{"http://127.0.0.1/callback", false},         // port required
		{"http://127.0.0.1:/callback", false},        // empty port
		{"http://127.0.0.1:0/callback", false},       // port 0 is not a listener
		{"http://127.0.0.1:65536/callback", false},   // out of range
		{"http://127.0.0.1:08976/callback", false},   // not a canonical port
		{"http://127.0.0.1:8976", false},             // no path
		{"http://example.com:8976/callback", false},  // not loopback
		{"http://127.0.0.2:8976/callback", false},    // only the address the spec names
		{"http://localhost.evil.com:8976/cb", false}, // a lookalike host
		{"http://127.0.0.1:8976@evil.com/cb", false}, // user information hides the real host
		{"http://user@127.0.0.1:8976/cb", false},     // any user information
		{"http://127.0.0.1:8976/cb#frag", false},     // fragments are forbidden (RFC 6749 §3.1.2)
		{"http://::1:8976/cb", false},                // IPv6 must be bracketed
		{"javascript:alert(1)", false},               // not a URL of ours at all
		{"http:127.0.0.1:8976/cb", false},            // opaque
		{"//127.0.0.1:8976/cb", false},               // no scheme
		{"HTTP://127.0.0.1:8976/cb", true},           // url.Parse lower-cases the scheme
		{"http://127.0.0.1:8976/cb\nx", false},       // control character
		{"http://0x7f.0.0.1:8976/cb", false},         // no alternative spellings
		{"http://[::ffff:127.0.0.1]:8976/cb", false}, // nor mapped addresses
		{"http://localhost:8976/" + string(make([]byte, 2100)), false},
	}
	for _, tc := range cases {
		_, err := ParseRedirectURI(tc.uri)
		if tc.ok && err != nil {
			t.Errorf("%q: want ok, got %v", tc.uri, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidRedirectURI) {
			t.Errorf("%q: want ErrInvalidRedirectURI, got %v", tc.uri, err)
		}
	}
}
