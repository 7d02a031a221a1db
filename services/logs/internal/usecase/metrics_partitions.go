package usecase

import (
	"log/slog"
	"time"
)

// MetricsPartitions keeps the metrics tables' day partitions in step with time, as
// Partitions does the entries' (dayUpkeep), against the longest metrics retention.
type MetricsPartitions struct{ *dayUpkeep }

// NewMetricsPartitions builds the upkeep. configuredMaxDays is
// LOGS_METRICS_MAX_RETENTION_DAYS; a plan on record with a longer metrics retention raises it.
func NewMetricsPartitions(st MetricsStore, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *MetricsPartitions {
	table := dayTable{name: "metrics", maxRetention: st.MaxMetricsRetentionDays, ensure: st.EnsureMetricPartitions, list: st.MetricPartitions, drop: st.DropMetricPartition}
	return &MetricsPartitions{newDayUpkeep(table, log, now, aheadDays, configuredMaxDays)}
}
