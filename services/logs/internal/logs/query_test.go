package logs

import (
	"errors"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestParseQueryRules(t *testing.T) {
	ts := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }
	cases := []struct {
		name      string
		raw       RawQuery
		wantParam string // "" means accepted
		wantStart time.Time
		wantEnd   time.Time
		wantLimit int
	}{
		{name: "defaults", raw: RawQuery{}, wantStart: testNow.Add(-time.Hour), wantEnd: testNow, wantLimit: 100},
		{name: "end only moves the default start", raw: RawQuery{End: ts(-2 * time.Hour)}, wantStart: testNow.Add(-3 * time.Hour), wantEnd: testNow.Add(-2 * time.Hour), wantLimit: 100},
		{name: "start only ends now", raw: RawQuery{Start: ts(-5 * time.Hour)}, wantStart: testNow.Add(-5 * time.Hour), wantEnd: testNow, wantLimit: 100},
		{name: "exactly 24 hours", raw: RawQuery{Start: ts(-24 * time.Hour), End: ts(0)}, wantStart: testNow.Add(-24 * time.Hour), wantEnd: testNow, wantLimit: 100},
		{name: "24 hours and one second", raw: RawQuery{Start: ts(-24*time.Hour - time.Second), End: ts(0)}, wantParam: "end"},
		{name: "start only, over 24 hours before now", raw: RawQuery{Start: ts(-25 * time.Hour)}, wantParam: "end"},
		{name: "empty window", raw: RawQuery{Start: ts(0), End: ts(0)}, wantStart: testNow, wantEnd: testNow, wantLimit: 100},
		{name: "end before start", raw: RawQuery{Start: ts(0), End: ts(-time.Second)}, wantParam: "end"},
		{name: "fractional seconds and offset", raw: RawQuery{Start: "2026-11-22T12:30:00.250+01:00", End: "2026-11-22T12:00:00Z"}, wantStart: testNow.Add(-30*time.Minute + 250*time.Millisecond), wantEnd: testNow, wantLimit: 100},
		{name: "offset plus decoded as space", raw: RawQuery{Start: "2026-11-22T12:30:00 01:00", End: ts(0)}, wantStart: testNow.Add(-30 * time.Minute), wantEnd: testNow, wantLimit: 100},
		{name: "start not a timestamp", raw: RawQuery{Start: "yesterday"}, wantParam: "start"},
		{name: "start without zone", raw: RawQuery{Start: "2026-11-22T11:00:00"}, wantParam: "start"},
		{name: "start date only", raw: RawQuery{Start: "2026-11-22"}, wantParam: "start"},
		{name: "start unix seconds", raw: RawQuery{Start: "1795000000"}, wantParam: "start"},
		{name: "end month 13", raw: RawQuery{End: "2026-13-01T00:00:00Z"}, wantParam: "end"},
		{name: "end two spaces", raw: RawQuery{End: "2026-11-22T12:00:00 01 00"}, wantParam: "end"},
		{name: "limit 1", raw: RawQuery{Limit: "1"}, wantStart: testNow.Add(-time.Hour), wantEnd: testNow, wantLimit: 1},
		{name: "limit 500", raw: RawQuery{Limit: "500"}, wantStart: testNow.Add(-time.Hour), wantEnd: testNow, wantLimit: 500},
		{name: "limit 0", raw: RawQuery{Limit: "0"}, wantParam: "limit"},
		{name: "limit 501", raw: RawQuery{Limit: "501"}, wantParam: "limit"},
		{name: "limit negative", raw: RawQuery{Limit: "-1"}, wantParam: "limit"},
		{name: "limit fraction", raw: RawQuery{Limit: "10.5"}, wantParam: "limit"},
		{name: "limit word", raw: RawQuery{Limit: "ten"}, wantParam: "limit"},
		{name: "limit huge", raw: RawQuery{Limit: "99999999999999999999"}, wantParam: "limit"},
		{name: "cursor garbage", raw: RawQuery{Cursor: "not-a-cursor"}, wantParam: "cursor"},
		{name: "cursor base64 of non-json", raw: RawQuery{Cursor: "aGVsbG8"}, wantParam: "cursor"},
		{name: "cursor with id 0", raw: RawQuery{Cursor: "eyJ0IjoxLCJpIjowfQ"}, wantParam: "cursor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := ParseQuery(tc.raw, testNow)
			if tc.wantParam != "" {
				var ip *InvalidParameterError
				if !errors.As(err, &ip) || ip.Name != tc.wantParam {
					t.Fatalf("want invalid %s, got %v", tc.wantParam, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want accepted, got %v", err)
			}
			if !q.Start.Equal(tc.wantStart) || !q.End.Equal(tc.wantEnd) || q.Limit != tc.wantLimit {
				t.Fatalf("got start %s end %s limit %d", q.Start, q.End, q.Limit)
			}
		})
	}
}

func TestCursorRoundTrip(t *testing.T) {
	c := Cursor{Timestamp: time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC), ID: 1 << 40}
	got, err := DecodeCursor(c.Encode())
	if err != nil || !got.Timestamp.Equal(c.Timestamp) || got.ID != c.ID {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	q, err := ParseQuery(RawQuery{Cursor: c.Encode()}, testNow)
	if err != nil || q.After == nil || *q.After != got {
		t.Fatalf("cursor parameter: %+v %v", q.After, err)
	}
}
