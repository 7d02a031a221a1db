package names

import (
	"strings"
	"testing"
)

func TestEnvKeys(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"A", true}, {"DATABASE_URL", true}, {"X1_2", true}, {"A" + strings.Repeat("B", EnvKeyMaxLen-1), true},
		{"", false}, {"_A", false}, {"1A", false}, {"database_url", false}, {"A-B", false}, {"A B", false},
		{"A\n", false}, {"A" + strings.Repeat("B", EnvKeyMaxLen), false},
	} {
		if got := ValidEnvKey(tc.key); got != tc.ok {
			t.Errorf("ValidEnvKey(%q) = %v, want %v", tc.key, got, tc.ok)
		}
	}
}
