package usecase

import (
	"context"
	"errors"
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
	checked CheckedEntryReader // nil when entries cannot check a guess in the same trip
	plans   Retention
	now     func() time.Time
	recent  *recentTargets
}

// NewReader builds a Reader; now is the clock, injectable for tests. When entries is also a
// CheckedEntryReader (the store is), a repeated read takes one round trip instead of two.
func NewReader(apps AppReader, entries EntryReader, plans Retention, now func() time.Time) *Reader {
	checked, _ := entries.(CheckedEntryReader)
	return &Reader{apps: apps, entries: entries, checked: checked, plans: plans, now: now, recent: newRecentTargets(recentTargetsMax)}
}

// Read resolves slug for accountID, validates raw and returns one page.
func (r *Reader) Read(ctx context.Context, accountID, slug string, raw logs.RawQuery) (Page, error) {
	if page, done, err := r.readGuessed(ctx, accountID, slug, raw); done {
		return page, err
	}
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
	rows, err := r.entries.Entries(ctx, target.AppID, q.Start, q.End, q.After, q.Process, q.Limit+1)
	if err != nil {
		return Page{}, err
	}
	if target.RetentionDays > 0 {
		r.recent.put(accountID, slug, target)
	}
	return newPage(q, days, rows), nil
}

// readGuessed serves a read in one round trip when the caller's slug was read before: the
// page of the app it resolved to then goes out together with the lookup of what the slug
// resolves to now, and is used only if the two agree (same app, same plan copy), so a
// deleted, renamed or replaced app or a changed plan is never answered from the guess. done
// is false whenever the full read must decide, errors of the query's parameters included
// (an unknown app's 404 comes before them).
func (r *Reader) readGuessed(ctx context.Context, accountID, slug string, raw logs.RawQuery) (page Page, done bool, err error) {
	if r.checked == nil {
		return Page{}, false, nil
	}
	guess, ok := r.recent.get(accountID, slug)
	if !ok {
		return Page{}, false, nil
	}
	now := r.now()
	q, err := logs.ParseQuery(raw, now)
	if err != nil {
		return Page{}, false, nil
	}
	if q, err = logs.ApplyRetention(q, now, guess.RetentionDays); err != nil {
		return Page{}, false, nil
	}
	target, rows, err := r.checked.TargetAndEntries(ctx, accountID, slug, guess.AppID, q.Start, q.End, q.After, q.Process, q.Limit+1)
	if errors.Is(err, logs.ErrNotFound) || err == nil && target != guess {
		r.recent.forget(accountID, slug)
		return Page{}, false, nil
	}
	if err != nil {
		return Page{}, true, err
	}
	return newPage(q, guess.RetentionDays, rows), true, nil
}

// newPage is the answer of q from rows, which hold one entry more than the page when a next
// page exists.
func newPage(q logs.Query, days int, rows []logs.Entry) Page {
	page := Page{RetentionDays: days, Start: q.Start, End: q.End, Entries: rows}
	if len(rows) > q.Limit {
		page.Entries = rows[:q.Limit]
		last := page.Entries[q.Limit-1]
		page.Next = &logs.Cursor{Timestamp: last.Timestamp, ID: last.ID}
	}
	return page
}
