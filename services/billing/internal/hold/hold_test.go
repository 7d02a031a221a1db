package hold

import (
	"testing"
	"time"
)

func TestStages(t *testing.T) {
	since := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	h := From(since)
	if !h.DeploysRefusedFrom.Equal(since.Add(7*24*time.Hour)) || !h.ServingStopsFrom.Equal(since.Add(14*24*time.Hour)) ||
		!h.ReclaimableFrom.Equal(since.Add(30*24*time.Hour)) {
		t.Fatalf("dates %+v", h)
	}
	cases := []struct {
		after time.Duration
		want  Stage
	}{
		{0, Notified},
		{7*24*time.Hour - time.Second, Notified},
		{7 * 24 * time.Hour, DeploysRefused},
		{14*24*time.Hour - time.Second, DeploysRefused},
		{14 * 24 * time.Hour, ServingStopped},
		{30*24*time.Hour - time.Second, ServingStopped},
		{30 * 24 * time.Hour, Reclaimable},
		{90 * 24 * time.Hour, Reclaimable},
	}
	for _, tc := range cases {
		if got := h.StageAt(since.Add(tc.after)); got != tc.want {
			t.Errorf("after %v: %s, want %s", tc.after, got, tc.want)
		}
	}
}

func TestOutstanding(t *testing.T) {
	for status, want := range map[string]bool{"open": true, "uncollectible": true, "paid": false, "void": false, "draft": false} {
		if Outstanding(status) != want {
			t.Errorf("%s: %v", status, !want)
		}
	}
}
