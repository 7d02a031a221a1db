package app

import "testing"

func TestDecideSize(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		size     int64
		readOnly bool
		want     SizeAction
	}{
		{999, false, SizeKeep},
		{1000, false, SizeKeep},
		{1001, false, SizeReadOnly},
		{5000, false, SizeReadOnly},
		{5000, true, SizeKeep},
		{1001, true, SizeKeep},
		{950, true, SizeKeep},
		{900, true, SizeKeep},
		{899, true, SizeWritable},
		{0, true, SizeWritable},
		{0, false, SizeKeep},
	} {
		if got := DecideSize(tc.size, limit, tc.readOnly); got != tc.want {
			t.Errorf("DecideSize(%d, %d, %v) = %v, want %v", tc.size, limit, tc.readOnly, got, tc.want)
		}
	}
}
