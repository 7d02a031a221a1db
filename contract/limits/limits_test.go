package limits

import (
	"testing"
	"time"
)

// The limits are the API's numbers; a change here is a change of the contract.
func TestLimitsAreTheAPIs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"release job", ReleaseLimit, 10 * time.Minute},
		{"log span", LogSpan, 24 * time.Hour},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if LogPageMin != 1 || LogPageMax != 500 {
		t.Errorf("log pages of %d to %d, want 1 to 500", LogPageMin, LogPageMax)
	}
}
