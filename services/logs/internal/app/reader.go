package logs

import (
	"context"
	"time"
)

// AppStore resolves the caller's apps from the service's own copy of them.
type AppStore interface {
	// AppID returns the id of accountID's live app named slug, or ErrNotFound.
	AppID(ctx context.Context, accountID, slug string) (string, error)
}

// EntryStore reads stored entries.
type EntryStore interface {
	// Entries returns at most limit entries of appID with from <= timestamp < to, strictly
	// after the cursor when it is set, ordered by (timestamp, id).
	Entries(ctx context.Context, appID string, from, to time.Time, after *Cursor, limit int) ([]Entry, error)
}

// Plans tells how many days of logs an account's plan keeps.
type Plans interface {
	RetentionDays(ctx context.Context, accountID string) (int, error)
}

// Page is one answer of a read.
type Page struct {
	RetentionDays int
	Start, End    time.Time
	Entries       []Entry
	Next          *Cursor // nil when the window holds nothing after the last entry
}

// Reader is the read use case of GET /api/apps/{slug}/logs.
type Reader struct {
	apps    AppStore
	entries EntryStore
	plans   Plans
	now     func() time.Time
}

// NewReader builds a Reader; now is the clock, injectable for tests.
func NewReader(apps AppStore, entries EntryStore, plans Plans, now func() time.Time) *Reader {
	return &Reader{apps: apps, entries: entries, plans: plans, now: now}
}

// Read resolves slug for accountID, validates raw and returns one page.
func (r *Reader) Read(ctx context.Context, accountID, slug string, raw RawQuery) (Page, error) {
	// The app first: an unknown, foreign or deleted app is 404 whatever the query says.
	appID, err := r.apps.AppID(ctx, accountID, slug)
	if err != nil {
		return Page{}, err
	}
	now := r.now()
	q, err := ParseQuery(raw, now)
	if err != nil {
		return Page{}, err
	}
	days, err := r.plans.RetentionDays(ctx, accountID)
	if err != nil {
		return Page{}, err
	}
	if q, err = ApplyRetention(q, now, days); err != nil {
		return Page{}, err
	}
	// One extra row tells whether a next page exists without a second query.
	rows, err := r.entries.Entries(ctx, appID, q.Start, q.End, q.After, q.Limit+1)
	if err != nil {
		return Page{}, err
	}
	page := Page{RetentionDays: days, Start: q.Start, End: q.End, Entries: rows}
	if len(rows) > q.Limit {
		page.Entries = rows[:q.Limit]
		last := page.Entries[q.Limit-1]
		page.Next = &Cursor{Timestamp: last.Timestamp, ID: last.ID}
	}
	return page, nil
}
