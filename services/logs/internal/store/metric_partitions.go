package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// The metrics tables are partitioned by UTC day on minute, as log_entries on ts; their
// partitions are <table>_pYYYYMMDD and hold [day, day+24h). Both tables always get the same
// days, so one cache entry per day stands for both. The DDL goes through the same one-
// connection pool, lock timeout and advisory lock as the entries' (partitions.go).
var metricTables = []string{"metric_requests", "metric_usage"}

func metricPartitionName(table string, day time.Time) string {
	return table + "_p" + day.Format(partitionLayout)
}

// EnsureMetricPartitions creates both metrics tables' partitions of days that do not exist
// yet, outside any ingest transaction (see EnsurePartitions).
func (s *Store) EnsureMetricPartitions(ctx context.Context, days []time.Time) error {
	for _, d := range days {
		day := logs.Day(d)
		key := "metrics:" + day.Format(partitionLayout)
		if s.parts.has(key) {
			continue
		}
		for _, table := range metricTables {
			if err := s.createTablePartition(ctx, table, day); err != nil {
				return err
			}
		}
		s.parts.set(key, true)
	}
	return nil
}

func (s *Store) createTablePartition(ctx context.Context, table string, day time.Time) error {
	name := metricPartitionName(table, day)
	if _, err := s.createPartitionOf(ctx, table, name, day); err != nil {
		return fmt.Errorf("store: create partition %s: %w", name, err)
	}
	return nil
}

// MetricPartitions lists the days that have a partition in either metrics table, oldest first.
func (s *Store) MetricPartitions(ctx context.Context) ([]time.Time, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT p.relname, c.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE i.inhparent IN ('metric_requests'::regclass, 'metric_usage'::regclass)`)
	if err != nil {
		return nil, fmt.Errorf("store: list metric partitions: %w", err)
	}
	seen := map[time.Time]bool{}
	var days []time.Time
	for rows.Next() {
		var parent, name string
		if err := rows.Scan(&parent, &name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list metric partitions: %w", err)
		}
		rest, ok := strings.CutPrefix(name, parent+"_p")
		day, err := time.Parse(partitionLayout, rest)
		if !ok || err != nil || seen[day] {
			continue // not one of ours, or seen in the other table
		}
		seen[day] = true
		days = append(days, day)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list metric partitions: %w", err)
	}
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	return days, nil
}

// DropMetricPartition drops both metrics tables' partitions of day with every row in them.
func (s *Store) DropMetricPartition(ctx context.Context, day time.Time) error {
	day = logs.Day(day)
	s.parts.set("metrics:"+day.Format(partitionLayout), false)
	for _, table := range metricTables {
		name := metricPartitionName(table, day)
		if err := s.detachAndDrop(ctx, table, name); err != nil {
			return fmt.Errorf("store: drop partition %s: %w", name, err)
		}
	}
	return nil
}
