package deploy

import (
	"testing"
	"time"
)

func TestHoldRefusesNewDeploysFromDaySeven(t *testing.T) {
	since := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	h := Hold{Active: true, Since: since, DeploysRefusedFrom: since.Add(7 * day), ServingStopsFrom: since.Add(14 * day), ReclaimableFrom: since.Add(30 * day)}
	cases := []struct {
		at      time.Duration
		refuses bool
		stage   string
	}{
		{0, false, "notified"},
		{7*day - time.Second, false, "notified"},
		{7 * day, true, "deploys_refused"},
		{14 * day, true, "serving_stopped"},
		{30 * day, true, "reclaimable"},
	}
	for _, tc := range cases {
		now := since.Add(tc.at)
		if h.RefusesDeploys(now) != tc.refuses || h.Stage(now) != tc.stage {
			t.Errorf("at %v: refuses %v stage %s", tc.at, h.RefusesDeploys(now), h.Stage(now))
		}
	}
	if (Hold{}).RefusesDeploys(since.Add(100 * day)) {
		t.Error("no hold refused a deploy")
	}
}
