package billinghold

import (
	"encoding/json"
	"testing"
	"time"
)

func TestNotices(t *testing.T) {
	for _, tc := range []struct {
		n     Notice
		known bool
	}{
		{NoticePaymentFailed, true}, {NoticeDeploysRefusedSoon, true}, {NoticeServingStopsSoon, true},
		{"", false}, {"Payment_failed", false}, {"reclaimable", false},
	} {
		if got := tc.n.Known(); got != tc.known {
			t.Errorf("%q.Known() = %v, want %v", tc.n, got, tc.known)
		}
	}
}

// The view's JSON is the API's: its field names, the stage's name and the time format.
func TestViewJSON(t *testing.T) {
	since := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	h := From(since)
	for _, tc := range []struct {
		at    time.Duration
		stage string
	}{{0, "notified"}, {8 * Day, "deploys_refused"}, {15 * Day, "serving_stopped"}, {31 * Day, "reclaimable"}} {
		got, err := json.Marshal(h.ViewAt(since.Add(tc.at)))
		want := `{"since":"2026-11-01T09:30:00.000Z","stage":"` + tc.stage + `","deploysRefusedFrom":"2026-11-08T09:30:00.000Z",` +
			`"servingStopsFrom":"2026-11-15T09:30:00.000Z","reclaimableFrom":"2026-12-01T09:30:00.000Z"}`
		if err != nil || string(got) != want {
			t.Errorf("after %v: %s, %v; want %s", tc.at, got, err, want)
		}
	}
}
