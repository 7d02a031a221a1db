package app

import (
	"context"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// Page is one answer of a read.
type Page struct {
	RetentionDays int
	Start, End    time.Time
	Entries       []logs.Entry
	Next          *logs.Cursor // nil when the window holds nothing after the last entry
}

// Reader is the read use case of GET /api/apps/{slug}/logs.
type Reader struct {
	apps    AppReader
	entries EntryReader
	plans   Retention
	now     func() time.Time
}

// NewReader builds a Reader; now is the clock, injectable for tests.
func NewReader(apps AppReader, entries EntryReader, plans Retention, now func() time.Time) *Reader {
	return &Reader{apps: apps, entries: entries, plans: plans, now: now}
}

// Read resolves slug for accountID, validates raw and returns one page.
func (r *Reader) Read(ctx context.Context, accountID, slug string, raw logs.RawQuery) (Page, error) {
	// The app first: an unknown, foreign or deleted app is 404 whatever the query says.
	target, err := r.apps.Target(ctx, accountID, slug)
	if err != nil {
		return Page{}, err
	}
	now := r.now()
	q, err := logs.ParseQuery(raw, now)
	if err != nil {
		return Page{}, err
	}
	// The plan copy came with the app; without one, the plans' policy (billing's answer).
	days := target.RetentionDays
	if days <= 0 {
		if days, err = r.plans.RetentionDays(ctx, accountID); err != nil {
			return Page{}, err
		}
	}
	if q, err = logs.ApplyRetention(q, now, days); err != nil {
		return Page{}, err
	}
	// One extra row tells whether a next page exists without a second query.
	rows, err := r.entries.Entries(ctx, target.AppID, q.Start, q.End, q.After, q.Limit+1)
	if err != nil {
		return Page{}, err
	}
	page := Page{RetentionDays: days, Start: q.Start, End: q.End, Entries: rows}
	if len(rows) > q.Limit {
		page.Entries = rows[:q.Limit]
		last := page.Entries[q.Limit-1]
		page.Next = &logs.Cursor{Timestamp: last.Timestamp, ID: last.ID}
	}
	return page, nil
}
