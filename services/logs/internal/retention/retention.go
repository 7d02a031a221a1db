// Package retention keeps the day partitions of log entries in step with time: it creates
// the coming days' partitions before lines arrive for them, and drops whole days that no
// plan keeps any more.
package retention

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
)

// Maintainer runs the partition upkeep.
type Maintainer struct {
	store      *store.Store
	log        *slog.Logger
	now        func() time.Time
	ahead      int // days after today that get a partition in advance
	configured int // the longest retention the operator configured
	maxDays    atomic.Int64
}

// New builds a Maintainer. configuredMaxDays is LOG_MAX_RETENTION_DAYS; a plan on record
// with a longer retention raises it, so no account ever loses lines its plan keeps.
func New(st *store.Store, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *Maintainer {
	m := &Maintainer{store: st, log: log, now: now, ahead: aheadDays, configured: configuredMaxDays}
	m.maxDays.Store(int64(configuredMaxDays))
	return m
}

// MaxDays is the longest retention in force: no line older than that is kept.
func (m *Maintainer) MaxDays() int { return int(m.maxDays.Load()) }

// Run does the upkeep every interval until ctx ends. A failed round is logged and tried again
// at the next tick: upkeep that is a little late harms nothing.
func (m *Maintainer) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := m.RunOnce(ctx); err != nil && ctx.Err() == nil {
				m.log.ErrorContext(ctx, "partition upkeep failed", "err", err.Error())
			}
		}
	}
}

// RunOnce refreshes the longest retention, creates partitions from today to today+ahead and
// drops the partitions whose every possible line is older than the longest retention.
func (m *Maintainer) RunOnce(ctx context.Context) error {
	maxDays := m.configured
	planMax, err := m.store.MaxRetentionDays(ctx)
	if err != nil {
		return err
	}
	if planMax > maxDays {
		maxDays = planMax
	}
	m.maxDays.Store(int64(maxDays))

	now := m.now()
	today := store.Day(now)
	days := make([]time.Time, 0, m.ahead+1)
	for i := 0; i <= m.ahead; i++ {
		days = append(days, today.AddDate(0, 0, i))
	}
	if err := m.store.EnsurePartitions(ctx, days); err != nil {
		return err
	}

	existing, err := m.store.Partitions(ctx)
	if err != nil {
		return err
	}
	edge := logs.RetentionEdge(now, maxDays)
	for _, day := range existing {
		// The day's partition holds lines up to day+24h; it goes once all of them are past.
		if day.Add(24 * time.Hour).After(edge) {
			continue
		}
		if err := m.store.DropPartition(ctx, day); err != nil {
			return err
		}
		m.log.InfoContext(ctx, "dropped log partition", "day", day.Format(time.DateOnly), "retention_days", maxDays)
	}
	return nil
}
