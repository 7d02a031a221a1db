package usecase

import (
	"log/slog"
	"time"
)

// Partitions keeps the day partitions of log entries in step with time (dayUpkeep).
type Partitions struct{ *dayUpkeep }

// NewPartitions builds the upkeep. configuredMaxDays is LOG_MAX_RETENTION_DAYS; a plan on
// record with a longer retention raises it, so no account ever loses lines its plan keeps.
func NewPartitions(st Store, log *slog.Logger, now func() time.Time, aheadDays, configuredMaxDays int) *Partitions {
	table := dayTable{name: "log", maxRetention: st.MaxRetentionDays, ensure: st.EnsurePartitions, list: st.Partitions, drop: st.DropPartition}
	return &Partitions{newDayUpkeep(table, log, now, aheadDays, configuredMaxDays)}
}
