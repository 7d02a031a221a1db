// Package follow reads an app's log lines as they arrive, each once.
package follow

import (
	"context"
	"time"

	"tori.dev/cli/internal/api"
	"tori.dev/contract/apitime"
	"tori.dev/contract/limits"
)

// Overlap is how far before the newest line shown each poll re-reads: a line ingested up to
// this long after its own timestamp is still seen, and ids already shown are skipped.
const Overlap = 10 * time.Second

// Fetch reads one page of the logs route.
type Fetch func(ctx context.Context, q api.LogQuery) (api.LogPage, error)

// Follower remembers what it has shown.
type Follower struct {
	// Keep selects lines (nil: all).
	Keep func(api.LogEntry) bool
	// PageSize is the limit of each page (default limits.LogPageMax, the route's most).
	PageSize int

	since  time.Time // never read before this
	next   time.Time // the next poll's start
	newest time.Time
	seen   map[string]time.Time
}

// New follows lines from since on.
func New(since time.Time) *Follower {
	return &Follower{since: since, next: since, seen: map[string]time.Time{}}
}

// Stamp formats a time as the logs route reads it: the API's time format.
func Stamp(t time.Time) string { return apitime.Format(t) }

// Poll reads everything from the last point on and returns the lines not shown before,
// oldest first.
func (f *Follower) Poll(ctx context.Context, fetch Fetch, now time.Time) ([]api.LogEntry, error) {
	size := f.PageSize
	if size == 0 {
		size = limits.LogPageMax
	}
	var out []api.LogEntry
	start := f.next
	for {
		// Windows of at most a day; the last is left open so the server's clock closes it.
		q := api.LogQuery{Start: Stamp(start), Limit: size}
		open := now.Sub(start) <= limits.LogSpan
		windowEnd := now
		if !open {
			windowEnd = start.Add(limits.LogSpan)
			q.End = Stamp(windowEnd)
		}
		for {
			page, err := fetch(ctx, q)
			if err != nil {
				return out, err
			}
			// Later pages keep the window the first one was given, as the cursor requires.
			if q.End == "" {
				if end, err := time.Parse(time.RFC3339Nano, page.End); err == nil {
					windowEnd = end
					q.End = page.End
				}
			}
			out = append(out, f.accept(page.Entries)...)
			if page.Next == nil || len(page.Entries) == 0 {
				break
			}
			q.Cursor = *page.Next
		}
		if open {
			f.advance(windowEnd)
			return out, nil
		}
		start = windowEnd
	}
}

func (f *Follower) accept(entries []api.LogEntry) []api.LogEntry {
	var out []api.LogEntry
	for _, e := range entries {
		if _, dup := f.seen[e.ID]; dup {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			ts = f.newest
		}
		f.seen[e.ID] = ts
		if ts.After(f.newest) {
			f.newest = ts
		}
		if f.Keep == nil || f.Keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// advance sets the next poll's start: the overlap before the newer of the newest line and the
// window's end, never before since; ids older than that can no longer come back.
func (f *Follower) advance(windowEnd time.Time) {
	mark := windowEnd
	if f.newest.After(mark) {
		mark = f.newest
	}
	next := mark.Add(-Overlap)
	if next.Before(f.since) {
		next = f.since
	}
	if next.After(f.next) {
		f.next = next
	}
	for id, ts := range f.seen {
		if ts.Before(f.next) {
			delete(f.seen, id)
		}
	}
}

// Remembered is how many ids are kept (for tests: memory must not grow without bound).
func (f *Follower) Remembered() int { return len(f.seen) }
