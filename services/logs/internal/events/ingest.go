package events

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
)

// Ingester stores the zones' log batches.
type Ingester struct {
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
	// maxDays is the longest retention of any plan: older lines would be dropped with their
	// partition anyway, so they are not stored.
	maxDays func() int
}

// NewIngester builds the zone.logs.batch handler.
func NewIngester(st *store.Store, log *slog.Logger, now func() time.Time, maxDays func() int) *Ingester {
	return &Ingester{store: st, log: log, now: now, maxDays: maxDays}
}

// Subscription is the durable consumer of log batches.
func (in *Ingester) Subscription(prefetch int) bus.Subscription {
	return bus.Subscription{Queue: QueueIngest, Keys: []string{KeyLogBatch}, Handle: in.Handle, Prefetch: prefetch}
}

// Handle stores one batch. Lines of apps already deleted are dropped; lines of apps not known
// yet are kept, since a zone may ship an app's first lines before apps.app.created arrives
// here, and reads only ever reach them through a known app.
func (in *Ingester) Handle(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
	var batch logsv1.LogBatch
	if err := d.Decode(&batch); err != nil {
		return bus.Permanent(fmt.Errorf("events: decode LogBatch: %w", err))
	}
	entries := in.accept(ctx, d.ID, batch.GetEntries())
	if len(entries) == 0 {
		return nil
	}
	if err := in.store.EnsurePartitions(ctx, days(entries)); err != nil {
		return err
	}
	if err := store.LockIngestShared(ctx, tx); err != nil {
		return err
	}
	// Read after the lock: a delete that committed before it is seen here.
	deleted, err := in.store.DeletedAmong(ctx, tx, appIDs(entries))
	if err != nil {
		return err
	}
	if len(deleted) > 0 {
		kept := entries[:0]
		for _, e := range entries {
			if !deleted[e.AppID] {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if len(entries) == 0 {
		return nil
	}
	_, err = in.store.CopyEntries(ctx, tx, entries)
	return err
}

// accept converts the batch, dropping entries that break the contract, and says so once.
func (in *Ingester) accept(ctx context.Context, msgID string, wire []*logsv1.LogEntry) []logs.Entry {
	now := in.now()
	oldest := logs.RetentionEdge(now, in.maxDays())
	newest := now.Add(maxAhead)
	out := make([]logs.Entry, 0, len(wire))
	var rejected map[string]int
	for _, w := range wire {
		e, reason := entryFromWire(w, oldest, newest)
		if reason != "" {
			if rejected == nil {
				rejected = map[string]int{}
			}
			rejected[reason]++
			continue
		}
		out = append(out, e)
	}
	if rejected != nil {
		in.log.WarnContext(ctx, "log entries dropped", "message_id", msgID, "kept", len(out), "dropped", rejected)
	}
	return out
}

func days(entries []logs.Entry) []time.Time {
	seen := map[time.Time]bool{}
	var out []time.Time
	for _, e := range entries {
		d := store.Day(e.Timestamp)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func appIDs(entries []logs.Entry) []uuid.UUID {
	seen := map[string]bool{}
	var out []uuid.UUID
	for _, e := range entries {
		if !seen[e.AppID] {
			seen[e.AppID] = true
			out = append(out, uuid.MustParse(e.AppID))
		}
	}
	return out
}
