package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/logs/internal/metrics"
)

// SaveMetricsPlan records p unless a copy of the same or a higher version is already there
// (SavePlan's rule, on the metrics' own table).
func (d queries) SaveMetricsPlan(ctx context.Context, p metrics.Plan) error {
	_, err := d.q.Exec(ctx, `
		INSERT INTO metric_plans (account_id, retention_days, instance_memory_bytes, version) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_id) DO UPDATE
		SET retention_days = EXCLUDED.retention_days, instance_memory_bytes = EXCLUDED.instance_memory_bytes,
		    version = EXCLUDED.version, updated_at = now()
		WHERE metric_plans.version < EXCLUDED.version`,
		p.AccountID, p.RetentionDays, p.InstanceMemoryBytes, p.Version)
	if err != nil {
		return fmt.Errorf("store: save metrics plan: %w", err)
	}
	return nil
}

// MetricsPlan implements usecase.MetricsStore; ok is false when there is no copy.
func (s *Store) MetricsPlan(ctx context.Context, accountID string) (p metrics.Plan, ok bool, err error) {
	p.AccountID = accountID
	err = s.pool.QueryRow(ctx, `SELECT retention_days, instance_memory_bytes, version FROM metric_plans WHERE account_id = $1`, accountID).
		Scan(&p.RetentionDays, &p.InstanceMemoryBytes, &p.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return metrics.Plan{}, false, nil
	}
	if err != nil {
		return metrics.Plan{}, false, fmt.Errorf("store: metrics plan: %w", err)
	}
	return p, true, nil
}

// MaxMetricsRetentionDays is the longest metrics retention of any plan on record, 0 when none.
func (s *Store) MaxMetricsRetentionDays(ctx context.Context) (int, error) {
	var days int
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(retention_days), 0) FROM metric_plans`).Scan(&days); err != nil {
		return 0, fmt.Errorf("store: longest metrics retention: %w", err)
	}
	return days, nil
}
