package usecase

import (
	"context"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// StreamSource is what a live stream reads: new entries of an app and whether it still
// exists. The store implements it over the same table the window route reads.
type StreamSource interface {
	// StreamEntries returns at most limit entries of appID with from <= timestamp < to and
	// (timestamp, id) > floor, of the processes proc selects, leaving out the ids in exclude,
	// ordered by (timestamp, id).
	StreamEntries(ctx context.Context, appID string, from, to time.Time, floor logs.Cursor, exclude []int64, proc logs.ProcessFilter, limit int) ([]logs.Entry, error)
	// AppLive reports whether appID is still a live (not deleted) app.
	AppLive(ctx context.Context, appID string) (bool, error)
}

// StreamBatch is the most entries one poll of a stream takes; a backlog larger than that is
// read by the polls that follow at once.
const StreamBatch = 500

// Streamer opens live streams of an app's entries.
type Streamer struct {
	apps  AppReader
	plans Retention
	src   StreamSource
	now   func() time.Time
	// late is how long after its own timestamp an entry may still be committed and be
	// streamed: zones ship in batches and ingests commit concurrently, so entries do not
	// arrive in (timestamp, id) order.
	late time.Duration
}

// NewStreamer opens streams over src; late is LOGS_STREAM_LATE.
func NewStreamer(apps AppReader, plans Retention, src StreamSource, now func() time.Time, late time.Duration) *Streamer {
	return &Streamer{apps: apps, plans: plans, src: src, now: now, late: late}
}

// Open checks the app (404 before anything else) and the parameters and returns the tail
// to poll. Nothing is read yet.
func (s *Streamer) Open(ctx context.Context, accountID, slug string, raw logs.RawStreamQuery) (*Tail, error) {
	target, err := s.apps.Target(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	now := s.now()
	q, err := logs.ParseStreamQuery(raw, now)
	if err != nil {
		return nil, err
	}
	days := target.RetentionDays
	if days <= 0 {
		if days, err = s.plans.RetentionDays(ctx, accountID); err != nil {
			return nil, err
		}
	}
	if q, err = logs.CheckStreamRetention(q, raw.Start != "", now, days); err != nil {
		return nil, err
	}
	t := &Tail{src: s.src, appID: target.AppID, proc: q.Process, late: s.late, from: q.Start, end: q.End, seen: map[int64]time.Time{}}
	if q.After != nil {
		t.floor, t.high = *q.After, *q.After
	} else {
		t.high = logs.Cursor{Timestamp: q.Start}
	}
	return t, nil
}

// Tail is one open stream's position. Each poll reads what arrived since the last, each
// entry once: entries are read from the newest one sent minus the late allowance, leaving
// out the ids already sent in that span, and never at or before the cursor the stream was
// resumed from.
type Tail struct {
	src   StreamSource
	appID string
	proc  logs.ProcessFilter
	late  time.Duration
	from  time.Time // nothing before it (the query's start)
	end   time.Time // zero: none
	floor logs.Cursor
	high  logs.Cursor // the newest entry sent, in (timestamp, id) order
	seen  map[int64]time.Time
}

// StreamEvent is an entry with the event id that resumes right after it.
type StreamEvent struct {
	Entry logs.Entry
	ID    string
}

// Poll returns the entries not sent before, oldest first, and whether a full batch was read
// (so the caller polls again at once).
func (t *Tail) Poll(ctx context.Context) ([]StreamEvent, bool, error) {
	from := t.high.Timestamp.Add(-t.late)
	if from.Before(t.from) {
		from = t.from
	}
	to := t.end
	if to.IsZero() {
		to = time.Now().Add(48 * time.Hour) // the ingest refuses entries over a day ahead
	}
	// Ids sent before the new window's start can no longer be read again.
	exclude := make([]int64, 0, len(t.seen))
	for id, ts := range t.seen {
		if ts.Before(from) {
			delete(t.seen, id)
			continue
		}
		exclude = append(exclude, id)
	}
	rows, err := t.src.StreamEntries(ctx, t.appID, from, to, t.floor, exclude, t.proc, StreamBatch)
	if err != nil {
		return nil, false, err
	}
	out := make([]StreamEvent, 0, len(rows))
	for _, e := range rows {
		t.seen[e.ID] = e.Timestamp
		c := logs.Cursor{Timestamp: e.Timestamp, ID: e.ID}
		if after(c, t.high) {
			t.high = c
		}
		// A late entry (older than the newest sent) carries the newest's id: resuming from
		// it must not send again what came after it.
		out = append(out, StreamEvent{Entry: e, ID: t.high.Encode()})
	}
	return out, len(rows) == StreamBatch, nil
}

// Live reports whether the app still exists.
func (t *Tail) Live(ctx context.Context) (bool, error) { return t.src.AppLive(ctx, t.appID) }

// Ended reports whether the stream's end has passed by more than the late allowance, so no
// entry before it can come any more.
func (t *Tail) Ended(now time.Time) bool {
	return !t.end.IsZero() && now.After(t.end.Add(t.late))
}

// Remembered is how many sent ids the tail keeps (bounded by the late allowance).
func (t *Tail) Remembered() int { return len(t.seen) }

func after(a, b logs.Cursor) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.After(b.Timestamp)
	}
	return a.ID > b.ID
}
