package logs

import (
	"errors"
	"testing"
	"time"
)

func TestApplyRetention(t *testing.T) {
	ts := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }
	day := 24 * time.Hour
	cases := []struct {
		name      string
		days      int
		raw       RawQuery
		wantGone  bool
		wantStart time.Time
	}{
		{name: "start exactly at the edge", days: 1, raw: RawQuery{Start: ts(-day), End: ts(-day + time.Hour)}, wantStart: testNow.Add(-day)},
		{name: "start one second past the edge", days: 1, raw: RawQuery{Start: ts(-day - time.Second), End: ts(-day + time.Hour)}, wantGone: true},
		{name: "seven days keeps six days ago", days: 7, raw: RawQuery{Start: ts(-6 * day), End: ts(-6*day + time.Hour)}, wantStart: testNow.Add(-6 * day)},
		{name: "seven days refuses eight days ago", days: 7, raw: RawQuery{Start: ts(-8 * day), End: ts(-8*day + time.Hour)}, wantGone: true},
		{name: "defaulted start is clamped", days: 1, raw: RawQuery{End: ts(-day + 30*time.Minute)}, wantStart: testNow.Add(-day)},
		{name: "defaulted start with end at the edge", days: 1, raw: RawQuery{End: ts(-day)}, wantGone: true},
		{name: "defaulted start with end past the edge", days: 1, raw: RawQuery{End: ts(-2 * day)}, wantGone: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := ParseQuery(tc.raw, testNow)
			if err != nil {
				t.Fatal(err)
			}
			q, err = ApplyRetention(q, testNow, tc.days)
			if tc.wantGone {
				if !errors.Is(err, ErrBeyondRetention) {
					t.Fatalf("want beyond retention, got %v (start %s)", err, q.Start)
				}
				return
			}
			if err != nil || !q.Start.Equal(tc.wantStart) {
				t.Fatalf("got start %s, %v", q.Start, err)
			}
		})
	}
}
