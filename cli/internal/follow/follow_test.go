package follow

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"tori.dev/cli/internal/api"
)

// store answers the logs route the way the service does: start inclusive, end exclusive
// (default now), oldest first by (timestamp, id), a cursor continuing after the last line.
type store struct {
	now     time.Time
	entries []api.LogEntry
	calls   []api.LogQuery
}

func (s *store) add(id int, ts time.Time, msg string) {
	s.entries = append(s.entries, api.LogEntry{ID: strconv.Itoa(id), Timestamp: Stamp(ts), Stream: "stdout", Message: msg})
}

func (s *store) fetch(_ context.Context, q api.LogQuery) (api.LogPage, error) {
	s.calls = append(s.calls, q)
	start, _ := time.Parse(time.RFC3339Nano, q.Start)
	end := s.now
	if q.End != "" {
		end, _ = time.Parse(time.RFC3339Nano, q.End)
	}
	if end.Sub(start) > 24*time.Hour {
		return api.LogPage{}, fmt.Errorf("span over 24h: %s..%s", q.Start, q.End)
	}
	var in []api.LogEntry
	for _, e := range s.entries {
		ts, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
		if !ts.Before(start) && ts.Before(end) {
			in = append(in, e)
		}
	}
	sort.Slice(in, func(i, j int) bool {
		if in[i].Timestamp != in[j].Timestamp {
			return in[i].Timestamp < in[j].Timestamp
		}
		a, _ := strconv.Atoi(in[i].ID)
		b, _ := strconv.Atoi(in[j].ID)
		return a < b
	})
	from := 0
	if q.Cursor != "" {
		from, _ = strconv.Atoi(q.Cursor)
	}
	page := api.LogPage{Start: q.Start, End: Stamp(end)}
	to := from + q.Limit
	if to < len(in) {
		next := strconv.Itoa(to)
		page.Next = &next
	} else {
		to = len(in)
	}
	page.Entries = in[from:to]
	return page, nil
}

func ids(es []api.LogEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestFollowShowsEachLineOnceAndLateLinesWithinTheOverlap(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	s := &store{now: t0}
	for i := 1; i <= 5; i++ {
		s.add(i, t0.Add(-time.Duration(10-i)*time.Second), "old")
	}
	f := New(t0.Add(-time.Hour))
	f.PageSize = 2 // several pages per poll
	ctx := context.Background()
	poll := func(want ...string) {
		t.Helper()
		got, err := f.Poll(ctx, s.fetch, s.now)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(got)) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("poll gave %v, want %v", ids(got), want)
		}
	}
	poll("1", "2", "3", "4", "5")
	poll() // nothing new: nothing repeated

	// Two lines at the same stamp as the newest, one ingested late with a stamp 8 s back,
	// and one 30 s back (outside the overlap: the decided rule lets it go).
	s.now = t0.Add(2 * time.Second)
	newest := t0.Add(-5 * time.Second)
	s.add(6, newest, "same stamp")
	s.add(7, t0.Add(1*time.Second), "new")
	s.add(8, t0.Add(-7*time.Second), "late")
	s.add(9, t0.Add(-40*time.Second), "too late")
	poll("8", "6", "7")
	poll()

	// Much later, after a quiet spell: the window starts near the last one's end.
	s.now = t0.Add(time.Hour)
	s.add(10, t0.Add(59*time.Minute), "after a while")
	poll("10")
	last := s.calls[len(s.calls)-1]
	if last.Start != Stamp(t0.Add(2*time.Second-Overlap)) {
		t.Fatalf("window started at %s, want the previous end minus the overlap", last.Start)
	}
	if f.Remembered() > 2 {
		t.Fatalf("%d ids remembered; old ones are never dropped", f.Remembered())
	}
}

func TestFollowKeepsOnlySelectedLines(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	s := &store{now: t0}
	s.add(1, t0.Add(-3*time.Second), "a")
	s.add(2, t0.Add(-2*time.Second), "b")
	f := New(t0.Add(-time.Minute))
	f.Keep = func(e api.LogEntry) bool { return e.Message == "b" }
	got, _ := f.Poll(context.Background(), s.fetch, s.now)
	if len(got) != 1 || got[0].ID != "2" {
		t.Fatalf("got %v", ids(got))
	}
}

func TestSinceOverADayReadsDayWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	s := &store{now: t0}
	s.add(1, t0.Add(-47*time.Hour), "two days ago")
	s.add(2, t0.Add(-20*time.Hour), "yesterday")
	s.add(3, t0.Add(-time.Minute), "now")
	f := New(t0.Add(-48 * time.Hour))
	got, err := f.Poll(context.Background(), s.fetch, s.now)
	if err != nil || fmt.Sprint(ids(got)) != "[1 2 3]" {
		t.Fatalf("got %v err %v", ids(got), err)
	}
}
