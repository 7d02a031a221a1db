package drains

import (
	"testing"
	"time"
)

// The defaults wait 1 s after a failed batch, then 2, 4, 8, 16 s, then 30 s for as long as
// the receiver fails: a receiver down for 30 s is tried again about 31 s after the first
// failure.
func TestBackoffDoublesFromOneSecondToThirty(t *testing.T) {
	o := DefaultSenderOptions
	var got []time.Duration
	var b, sum time.Duration
	for range 8 {
		b = nextBackoff(b, o.MinBackoff, o.MaxBackoff)
		got = append(got, b)
		sum += b
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoffs %v, want %v seconds", got, want)
		}
	}
	if o.Batch != 1000 || o.Backlog != 10000 || o.Poll > time.Second || FailingAfter != 5 {
		t.Fatalf("defaults %+v, failing after %d", o, FailingAfter)
	}
}
