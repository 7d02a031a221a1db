package metrics

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/services/logs/internal/logs"
)

var now = time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		name string
		raw  RawQuery
		// want is checked when wantErr is empty; wantErr is the parameter the message starts with.
		want    Query
		wantErr string
	}{
		{name: "defaults", raw: RawQuery{},
			want: Query{Metric: "requests", Start: now.Add(-time.Hour), End: now, Step: 60}},
		{name: "every metric", raw: RawQuery{Metric: "instances", Step: "300"},
			want: Query{Metric: "instances", Start: now.Add(-time.Hour), End: now, Step: 300}},
		{name: "explicit window with an offset", raw: RawQuery{Metric: "latency", Start: "2026-11-22T10:00:00+01:00", End: "2026-11-22T11:30:00Z", Step: "3600"},
			want: Query{Metric: "latency", Start: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 22, 11, 30, 0, 0, time.UTC), Step: 3600}},
		{name: "a + decoded as a space", raw: RawQuery{Start: "2026-11-22T10:00:00 01:00"},
			want: Query{Metric: "requests", Start: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), End: now, Step: 60}},
		{name: "31 days at an hour a point", raw: RawQuery{Start: "2026-10-22T12:00:30Z", Step: "3600"},
			want: Query{Metric: "requests", Start: now.Add(-31 * 24 * time.Hour), End: now, Step: 3600}},
		{name: "type filter", raw: RawQuery{Metric: "cpu", Process: "web"},
			want: Query{Metric: "cpu", Start: now.Add(-time.Hour), End: now, Step: 60, Process: logs.ProcessFilter{Type: "web"}}},
		{name: "exact filter", raw: RawQuery{Metric: "memory", Process: "web.2"},
			want: Query{Metric: "memory", Start: now.Add(-time.Hour), End: now, Step: 60, Process: logs.ProcessFilter{Type: "web", Exact: "web.2"}}},

		{name: "unknown metric", raw: RawQuery{Metric: "disk"}, wantErr: "metric"},
		{name: "metric case", raw: RawQuery{Metric: "CPU"}, wantErr: "metric"},
		{name: "bad start", raw: RawQuery{Start: "yesterday"}, wantErr: "start"},
		{name: "bad end", raw: RawQuery{End: "2026-11-22"}, wantErr: "end"},
		{name: "end before start", raw: RawQuery{Start: "2026-11-22T11:00:00Z", End: "2026-11-22T10:00:00Z"}, wantErr: "end"},
		{name: "span over 31 days", raw: RawQuery{Start: "2026-10-22T12:00:00Z", End: "2026-11-22T12:00:01Z", Step: "3600"}, wantErr: "end"},
		{name: "step not offered", raw: RawQuery{Step: "120"}, wantErr: "step"},
		{name: "step not a number", raw: RawQuery{Step: "1m"}, wantErr: "step"},
		{name: "over 1440 steps", raw: RawQuery{Start: "2026-11-21T11:00:00Z", Step: "60"}, wantErr: "step"},
		{name: "over 1440 steps of 5 minutes", raw: RawQuery{Start: "2026-11-17T00:00:00Z", Step: "300"}, wantErr: "step"},
		{name: "bad process", raw: RawQuery{Metric: "cpu", Process: "Web 1"}, wantErr: "process"},
		{name: "process on requests", raw: RawQuery{Metric: "requests", Process: "web"}, wantErr: "process"},
		{name: "process on latency", raw: RawQuery{Metric: "latency", Process: "web.1"}, wantErr: "process"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := ParseQuery(c.raw, now)
			if c.wantErr != "" {
				var ip *logs.InvalidParameterError
				if !errors.As(err, &ip) || ip.Name != c.wantErr || !strings.HasPrefix(err.Error(), c.wantErr+": ") {
					t.Fatalf("want an invalid %s, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.Metric != c.want.Metric || !q.Start.Equal(c.want.Start) || !q.End.Equal(c.want.End) || q.Step != c.want.Step || q.Process != c.want.Process {
				t.Fatalf("got %+v, want %+v", q, c.want)
			}
		})
	}
}

// A day at a minute a point is the most points allowed; the first point is the start aligned
// down to the step, and the last the step that holds the end's instant.
func TestPointsAndAlignment(t *testing.T) {
	q, err := ParseQuery(RawQuery{Start: "2026-11-21T12:00:30Z", End: "2026-11-22T12:00:30Z"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if n := q.Points(); n != 1441 {
		// 12:00:00 (aligned) to 12:00:30 the next day: 1,440 whole minutes and the started one.
		t.Fatalf("points %d", n)
	}
	if _, err := ParseQuery(RawQuery{Start: "2026-11-21T12:00:29Z", End: "2026-11-22T12:00:30Z"}, now); err == nil {
		t.Fatal("a day and a second at a minute a step: accepted")
	}
	cases := []struct {
		start, end string
		step, n    int
		first      string
	}{
		{"2026-11-22T10:00:00Z", "2026-11-22T11:00:00Z", 60, 60, "2026-11-22T10:00:00Z"},
		{"2026-11-22T10:00:30Z", "2026-11-22T11:00:00Z", 60, 60, "2026-11-22T10:00:00Z"},
		{"2026-11-22T10:07:00Z", "2026-11-22T11:00:01Z", 300, 12, "2026-11-22T10:05:00Z"},
		{"2026-11-22T10:59:00Z", "2026-11-22T11:00:00Z", 3600, 1, "2026-11-22T10:00:00Z"},
		{"2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z", 60, 0, "2026-11-22T10:00:00Z"},
	}
	for _, c := range cases {
		q, err := ParseQuery(RawQuery{Start: c.start, End: c.end, Step: itoa(c.step)}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.First().Format(time.RFC3339); got != c.first || q.Points() != c.n {
			t.Errorf("%s..%s step %d: first %s, %d points; want %s, %d", c.start, c.end, c.step, got, q.Points(), c.first, c.n)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestApplyRetention(t *testing.T) {
	asked, err := ParseQuery(RawQuery{Start: now.Add(-48 * time.Hour).Format(time.RFC3339), Step: "300"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyRetention(asked, now, 1); !errors.Is(err, ErrBeyondRetention) {
		t.Fatalf("an asked start past the retention: %v", err)
	}
	if q, err := ApplyRetention(asked, now, 7); err != nil || !q.Start.Equal(asked.Start) {
		t.Fatalf("within the retention: %v %v", q.Start, err)
	}
	// A defaulted start (an hour before an end near the edge) is clamped, not refused.
	near, err := ParseQuery(RawQuery{End: now.Add(-24*time.Hour + 30*time.Minute).Format(time.RFC3339)}, now)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ApplyRetention(near, now, 1)
	if err != nil || !q.Start.Equal(RetentionEdge(now, 1)) {
		t.Fatalf("defaulted start: %v %v", q.Start, err)
	}
	// Nothing of the window left: refused even so.
	gone, _ := ParseQuery(RawQuery{End: now.Add(-25 * time.Hour).Format(time.RFC3339)}, now)
	if _, err := ApplyRetention(gone, now, 1); !errors.Is(err, ErrBeyondRetention) {
		t.Fatalf("a window wholly past the retention: %v", err)
	}
}
