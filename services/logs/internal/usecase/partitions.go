package usecase

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// Partitions keeps the day partitions of log entries in step with time: it creates the
// coming days' partitions before lines arrive for them, and drops whole days that no plan
// keeps any more.
type Partitions struct {
	store      Store
	log        *slog.Logger
	now        func() time.Time
	ahead      int // days after today that get a partition in advance
	configured int // the longest retention the operator configured
	maxDays    atomic.Int64
}

// NewPartitions builds the upkeep. configuredMaxDays is LOG_MAX_RETENTION_DAYS; a plan on
// record with a longer retention raises it, so no account ever loses lines its plan keeps.
func NewPartitions(st Store, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *Partitions {
	p := &Partitions{store: st, log: log, now: now, ahead: aheadDays, configured: configuredMaxDays}
	p.maxDays.Store(int64(configuredMaxDays))
	return p
}

// MaxDays is the longest retention in force: no line older than that is kept.
func (p *Partitions) MaxDays() int { return int(p.maxDays.Load()) }

// Upkeep refreshes the longest retention, creates partitions from today to today+ahead and
// drops the partitions whose every possible line is older than the longest retention. It
// returns how many partitions it dropped.
func (p *Partitions) Upkeep(ctx context.Context) (int64, error) {
	maxDays := p.configured
	planMax, err := p.store.MaxRetentionDays(ctx)
	if err != nil {
		return 0, err
	}
	if planMax > maxDays {
		maxDays = planMax
	}
	p.maxDays.Store(int64(maxDays))

	now := p.now()
	today := logs.Day(now)
	days := make([]time.Time, 0, p.ahead+1)
	for i := 0; i <= p.ahead; i++ {
		days = append(days, today.AddDate(0, 0, i))
	}
	if err := p.store.EnsurePartitions(ctx, days); err != nil {
		return 0, err
	}

	existing, err := p.store.Partitions(ctx)
	if err != nil {
		return 0, err
	}
	edge := logs.RetentionEdge(now, maxDays)
	var dropped int64
	for _, day := range existing {
		// The day's partition holds lines up to day+24h; it goes once all of them are past.
		if day.Add(24 * time.Hour).After(edge) {
			continue
		}
		if err := p.store.DropPartition(ctx, day); err != nil {
			return dropped, err
		}
		dropped++
		p.log.InfoContext(ctx, "dropped log partition", "day", day.Format(time.DateOnly), "retention_days", maxDays)
	}
	return dropped, nil
}
