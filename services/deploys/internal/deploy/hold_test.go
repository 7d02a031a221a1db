package deploy

import (
	"testing"
	"time"

	"tori.dev/contract/billinghold"
)

func TestHoldRefusesNewDeploysFromDaySevenOnlyWhileActive(t *testing.T) {
	since := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	dates := billinghold.From(since)
	cases := []struct {
		active  bool
		at      time.Duration
		refuses bool
	}{
		{true, 0, false},
		{true, 7*day - time.Second, false},
		{true, 7 * day, true},
		{true, 14 * day, true},
		{true, 30 * day, true},
		{false, 7 * day, false},
		{false, 100 * day, false},
	}
	for _, tc := range cases {
		h := Hold{Active: tc.active, Hold: dates}
		if got := h.RefusesDeploys(since.Add(tc.at)); got != tc.refuses {
			t.Errorf("active %v at %v: refuses %v, want %v", tc.active, tc.at, got, tc.refuses)
		}
	}
	if (Hold{}).RefusesDeploys(since.Add(100 * day)) {
		t.Error("no hold refused a deploy")
	}
}
