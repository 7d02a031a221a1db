package sizecap

import "testing"

// The size rule, one row a case: the flip each measured size and state gives under a cap of
// 1000 bytes, the cap an override leaves, and the ceiling under a cap.
func TestSizeCap(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		size     int64
		readOnly bool
		want     Action
	}{
		{999, false, Keep},
		{1000, false, Keep}, // at the cap: still writable
		{1001, false, ReadOnly},
		{5000, false, ReadOnly},
		{5000, true, Keep},
		{1001, true, Keep},
		{950, true, Keep},
		{900, true, Keep}, // at 90 %: still read-only
		{899, true, Writable},
		{0, true, Writable},
		{0, false, Keep},
	} {
		if got := Decide(tc.size, limit, tc.readOnly); got != tc.want {
			t.Errorf("Decide(%d, %d, %v) = %v, want %v", tc.size, limit, tc.readOnly, got, tc.want)
		}
	}
	for _, tc := range []struct{ maxBytes, override, want int64 }{
		{1 << 30, 0, 1 << 30},       // the plan's
		{1 << 30, 8 << 20, 8 << 20}, // the tests' lower one
		{8 << 20, 1 << 30, 8 << 20}, // an override never raises a cap
	} {
		if got := Cap(tc.maxBytes, tc.override); got != tc.want {
			t.Errorf("Cap(%d, %d) = %d, want %d", tc.maxBytes, tc.override, got, tc.want)
		}
	}
	for _, tc := range []struct{ capBytes, want int64 }{
		{1 << 30, 1181116006 - 1181116006%4096}, // 110 % of 1 GiB, whole blocks
		{10 << 30, 11811155968},
		{8 << 20, 32 << 20}, // never under the smallest filesystem
		{0, 32 << 20},
	} {
		if got := Ceiling(tc.capBytes); got != tc.want || got%4096 != 0 {
			t.Errorf("Ceiling(%d) = %d, want %d in whole blocks", tc.capBytes, got, tc.want)
		}
	}
}
