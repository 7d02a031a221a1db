package usecase

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// dayTable is one table partitioned by day (log entries, the metrics' tables): how to learn
// the longest retention any plan on record asks of it, and how to create, list and drop its
// days.
type dayTable struct {
	name         string // for the log line: "log", "metrics"
	maxRetention func(ctx context.Context) (int, error)
	ensure       func(ctx context.Context, days []time.Time) error
	list         func(ctx context.Context) ([]time.Time, error)
	drop         func(ctx context.Context, day time.Time) error
}

// dayUpkeep keeps a dayTable's partitions in step with time: the coming days created before
// rows arrive for them, and whole days that no plan keeps any more dropped (retention by
// dropping partitions, never by deleting rows).
type dayUpkeep struct {
	table      dayTable
	log        *slog.Logger
	now        func() time.Time
	ahead      int // days after today that get a partition in advance
	configured int // the longest retention the operator configured
	maxDays    atomic.Int64
}

func newDayUpkeep(table dayTable, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *dayUpkeep {
	u := &dayUpkeep{table: table, log: log, now: now, ahead: aheadDays, configured: configuredMaxDays}
	u.maxDays.Store(int64(configuredMaxDays))
	return u
}

// MaxDays is the longest retention in force: no row older than that is kept.
func (u *dayUpkeep) MaxDays() int { return int(u.maxDays.Load()) }

// Upkeep refreshes the longest retention (a plan on record with a longer one than configured
// raises it, so no team ever loses what its plan keeps), creates partitions from today to
// today+ahead and drops the partitions whose every possible row is older than the longest
// retention. It returns how many partitions it dropped.
func (u *dayUpkeep) Upkeep(ctx context.Context) (int64, error) {
	planMax, err := u.table.maxRetention(ctx)
	if err != nil {
		return 0, err
	}
	maxDays := max(u.configured, planMax)
	u.maxDays.Store(int64(maxDays))

	now := u.now()
	today := logs.Day(now)
	days := make([]time.Time, 0, u.ahead+1)
	for i := 0; i <= u.ahead; i++ {
		days = append(days, today.AddDate(0, 0, i))
	}
	if err := u.table.ensure(ctx, days); err != nil {
		return 0, err
	}
	existing, err := u.table.list(ctx)
	if err != nil {
		return 0, err
	}
	edge := logs.RetentionEdge(now, maxDays)
	var dropped int64
	for _, day := range existing {
		// The day's partition holds rows up to day+24h; it goes once all of them are past.
		if day.Add(24 * time.Hour).After(edge) {
			continue
		}
		if err := u.table.drop(ctx, day); err != nil {
			return dropped, err
		}
		dropped++
		u.log.InfoContext(ctx, "dropped "+u.table.name+" partition", "day", day.Format(time.DateOnly), "retention_days", maxDays)
	}
	return dropped, nil
}
