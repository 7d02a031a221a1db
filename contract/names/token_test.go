package names

import (
	"strings"
	"testing"
)

// A token's kind is read from its first characters: the prefixes are the API's, and neither
// begins the other.
func TestTokenPrefixes(t *testing.T) {
	for _, tc := range []struct{ got, want string }{{SessionTokenPrefix, "tok_"}, {APITokenPrefix, "svc_"}} {
		if tc.got != tc.want {
			t.Errorf("prefix %q, want the API's %q", tc.got, tc.want)
		}
	}
	if strings.HasPrefix(SessionTokenPrefix, APITokenPrefix) || strings.HasPrefix(APITokenPrefix, SessionTokenPrefix) {
		t.Error("one prefix begins the other: a token's kind would be ambiguous")
	}
}
