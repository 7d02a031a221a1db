package billinghold

import (
	"testing"
	"time"
)

func TestStages(t *testing.T) {
	since := time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	h := From(since)
	if !h.Since.Equal(since) || h.Since.Location() != time.UTC {
		t.Fatalf("since %v, want %v in UTC", h.Since, since)
	}
	if !h.DeploysRefusedFrom.Equal(since.Add(7*24*time.Hour)) || !h.ServingStopsFrom.Equal(since.Add(14*24*time.Hour)) ||
		!h.ReclaimableFrom.Equal(since.Add(30*24*time.Hour)) {
		t.Fatalf("dates %+v", h)
	}
	cases := []struct {
		after   time.Duration
		want    Stage
		refuses bool
	}{
		{-time.Second, Notified, false},
		{0, Notified, false},
		{7*24*time.Hour - time.Second, Notified, false},
		{7 * 24 * time.Hour, DeploysRefused, true},
		{14*24*time.Hour - time.Second, DeploysRefused, true},
		{14 * 24 * time.Hour, ServingStopped, true},
		{30*24*time.Hour - time.Second, ServingStopped, true},
		{30 * 24 * time.Hour, Reclaimable, true},
		{90 * 24 * time.Hour, Reclaimable, true},
	}
	for _, tc := range cases {
		now := since.Add(tc.after)
		if got := h.StageAt(now); got != tc.want {
			t.Errorf("after %v: %s, want %s", tc.after, got, tc.want)
		}
		if got := h.RefusesDeploysAt(now); got != tc.refuses {
			t.Errorf("after %v: refuses deploys %v, want %v", tc.after, got, tc.refuses)
		}
	}
}
