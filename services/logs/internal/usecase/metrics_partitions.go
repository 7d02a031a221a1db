package usecase

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
)

// MetricsPartitions keeps the metrics tables' day partitions in step with time, as
// Partitions does the entries': the coming days ahead, and whole days older than the longest
// metrics retention dropped.
type MetricsPartitions struct {
	store      MetricsStore
	log        *slog.Logger
	now        func() time.Time
	ahead      int
	configured int // LOGS_METRICS_MAX_RETENTION_DAYS
	maxDays    atomic.Int64
}

// NewMetricsPartitions builds the upkeep; a plan on record with a longer metrics retention
// than configuredMaxDays raises it.
func NewMetricsPartitions(st MetricsStore, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *MetricsPartitions {
	p := &MetricsPartitions{store: st, log: log, now: now, ahead: aheadDays, configured: configuredMaxDays}
	p.maxDays.Store(int64(configuredMaxDays))
	return p
}

// MaxDays is the longest metrics retention in force.
func (p *MetricsPartitions) MaxDays() int { return int(p.maxDays.Load()) }

// Upkeep refreshes the longest retention, creates today's and the next days' partitions and
// drops the days wholly older than the longest retention; it returns how many days it dropped.
func (p *MetricsPartitions) Upkeep(ctx context.Context) (int64, error) {
	maxDays := p.configured
	planMax, err := p.store.MaxMetricsRetentionDays(ctx)
	if err != nil {
		return 0, err
	}
	maxDays = max(maxDays, planMax)
	p.maxDays.Store(int64(maxDays))

	now := p.now()
	today := logs.Day(now)
	days := make([]time.Time, 0, p.ahead+1)
	for i := 0; i <= p.ahead; i++ {
		days = append(days, today.AddDate(0, 0, i))
	}
	if err := p.store.EnsureMetricPartitions(ctx, days); err != nil {
		return 0, err
	}
	existing, err := p.store.MetricPartitions(ctx)
	if err != nil {
		return 0, err
	}
	edge := metrics.RetentionEdge(now, maxDays)
	var dropped int64
	for _, day := range existing {
		if day.Add(24 * time.Hour).After(edge) {
			continue
		}
		if err := p.store.DropMetricPartition(ctx, day); err != nil {
			return dropped, err
		}
		dropped++
		p.log.InfoContext(ctx, "dropped metrics partition", "day", day.Format(time.DateOnly), "retention_days", maxDays)
	}
	return dropped, nil
}
