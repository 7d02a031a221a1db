package usecase

import (
	"context"
	"time"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
)

// MetricsTx is a transaction that also stores metrics: the bus consumer's.
type MetricsTx interface {
	Tx
	// SaveReport stores a report's rows, skipping those of a report already kept; the
	// partition of its day must exist. It returns how many rows were new.
	SaveReport(ctx context.Context, r metrics.Report) (int64, error)
	// SaveMetricsPlan keeps p unless a copy of the same or a higher version is stored.
	SaveMetricsPlan(ctx context.Context, p metrics.Plan) error
}

// MetricsStore is the metrics' storage outside any one transaction.
type MetricsStore interface {
	// RequestSums and LatencySums are, per step starting in [from, to), the sums of each
	// status class's count or latency bucket of appID's reports.
	RequestSums(ctx context.Context, appID string, from, to time.Time, step int) ([]metrics.StepSum, error)
	LatencySums(ctx context.Context, appID string, from, to time.Time, step int) ([]metrics.StepSum, error)
	// InstanceUsage is, per step and instance proc selects, the average cores, the largest
	// memory and limit sampled.
	InstanceUsage(ctx context.Context, appID string, from, to time.Time, step int, proc logs.ProcessFilter) ([]metrics.StepUsage, error)

	// MetricsPlan is the account's copy; ok is false when there is none.
	MetricsPlan(ctx context.Context, accountID string) (p metrics.Plan, ok bool, err error)
	// MaxMetricsRetentionDays is the longest metrics retention of any plan on record, 0 when none.
	MaxMetricsRetentionDays(ctx context.Context) (int, error)
	// InMetricsTx runs fn in one transaction.
	InMetricsTx(ctx context.Context, fn func(tx MetricsTx) error) error

	// EnsureMetricPartitions creates the partitions of days that do not exist yet, outside
	// any ingest transaction; MetricPartitions lists the days that have one, oldest first.
	EnsureMetricPartitions(ctx context.Context, days []time.Time) error
	MetricPartitions(ctx context.Context) ([]time.Time, error)
	DropMetricPartition(ctx context.Context, day time.Time) error
}

// MetricsPlanSource asks billing for the metrics' part of an account's plan. Its errors wrap
// logs.ErrPlanUnavailable.
type MetricsPlanSource interface {
	MetricsPlan(ctx context.Context, accountID string) (metrics.Plan, error)
}
