package usecase

import (
	"context"
	"log/slog"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// maxAhead bounds how far in the future a zone's clock may stamp a line. Further out, the
// line would sit in a partition created for a day that retention would not reach for
// months.
const maxAhead = 24 * time.Hour

// Why an entry within the contract's shape is still not kept.
const (
	rejectTooOld = "older_than_retention"
	rejectTooNew = "too_far_ahead"
)

// Batch is one zone message's entries, with the count of those the wire already refused,
// by reason.
type Batch struct {
	MessageID string
	// Zone is the zone whose agent published the batch, as the broker vouches for it; ""
	// when the publisher is no zone (only a test's bus lets such a batch through).
	Zone     string
	Entries  []logs.Entry
	Rejected map[string]int
}

// Known is what the service knows of an app a batch names.
type Known struct {
	Deleted bool
	Zone    string // the zone that hosts it; "" when not known
}

// Ingest stores the zones' log batches.
type Ingest struct {
	store Store
	log   *slog.Logger
	now   func() time.Time
	// maxDays is the longest retention in force: older lines would be dropped with their
	// partition anyway, so they are not stored.
	maxDays func() int
}

// NewIngest builds the ingest use case.
func NewIngest(st Store, log *slog.Logger, now func() time.Time, maxDays func() int) *Ingest {
	return &Ingest{store: st, log: log, now: now, maxDays: maxDays}
}

// Store stores one batch in tx. Lines of apps already deleted are dropped, and so are lines
// of an app from any zone but the one hosting it: a zone's agent runs customer code beside
// it and must not be able to write into another zone's apps. Lines of apps not known yet
// are kept, since a zone may ship an app's first lines before apps.app.created arrives
// here, and reads only ever reach them through a known app.
func (in *Ingest) Store(ctx context.Context, tx Tx, b Batch) error {
	entries := in.accept(ctx, b)
	if len(entries) == 0 {
		return nil
	}
	if err := in.store.EnsurePartitions(ctx, days(entries)); err != nil {
		return err
	}
	if err := tx.LockIngestShared(ctx); err != nil {
		return err
	}
	// Read after the lock: a delete that committed before it is seen here.
	known, err := tx.KnownAmong(ctx, appIDs(entries))
	if err != nil {
		return err
	}
	kept, foreign := entries[:0], 0
	for _, e := range entries {
		k := known[e.AppID]
		switch {
		case k.Deleted:
		case k.Zone != "" && k.Zone != b.Zone:
			foreign++
		default:
			kept = append(kept, e)
		}
	}
	entries = kept
	if foreign > 0 {
		in.log.WarnContext(ctx, "log entries for apps another zone hosts dropped", "message_id", b.MessageID, "zone", b.Zone, "dropped", foreign)
	}
	if len(entries) == 0 {
		return nil
	}
	_, err = tx.CopyEntries(ctx, entries)
	return err
}

// accept drops the entries outside the window a line may be stored in, and says once what
// the batch lost.
func (in *Ingest) accept(ctx context.Context, b Batch) []logs.Entry {
	now := in.now()
	oldest := logs.RetentionEdge(now, in.maxDays())
	newest := now.Add(maxAhead)
	rejected := b.Rejected
	reject := func(reason string) {
		if rejected == nil {
			rejected = map[string]int{}
		}
		rejected[reason]++
	}
	out := make([]logs.Entry, 0, len(b.Entries))
	for _, e := range b.Entries {
		switch {
		case e.Timestamp.Before(oldest):
			reject(rejectTooOld)
		case e.Timestamp.After(newest):
			reject(rejectTooNew)
		default:
			out = append(out, e)
		}
	}
	if len(rejected) > 0 {
		in.log.WarnContext(ctx, "log entries dropped", "message_id", b.MessageID, "kept", len(out), "dropped", rejected)
	}
	return out
}

func days(entries []logs.Entry) []time.Time {
	seen := map[time.Time]bool{}
	var out []time.Time
	for _, e := range entries {
		d := logs.Day(e.Timestamp)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func appIDs(entries []logs.Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if !seen[e.AppID] {
			seen[e.AppID] = true
			out = append(out, e.AppID)
		}
	}
	return out
}
