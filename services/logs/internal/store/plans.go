package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/logs/internal/logs"
)

// SavePlan records plan unless a copy of the same or a higher version is already there, so
// a late, older event never undoes a newer one.
func (d queries) SavePlan(ctx context.Context, p logs.Plan) error {
	_, err := d.q.Exec(ctx, `
		INSERT INTO account_plans (account_id, plan, log_retention_days, version, drains) VALUES ($1, $2, $3, $4, NULLIF($5, 0))
		ON CONFLICT (account_id) DO UPDATE
		SET plan = EXCLUDED.plan, log_retention_days = EXCLUDED.log_retention_days,
		    version = EXCLUDED.version, drains = EXCLUDED.drains, updated_at = now()
		WHERE account_plans.version < EXCLUDED.version`,
		p.AccountID, p.Name, p.RetentionDays, p.Version, p.Drains)
	if err != nil {
		return fmt.Errorf("store: save plan: %w", err)
	}
	return nil
}

// PlanRetention implements usecase.Store.
func (s *Store) PlanRetention(ctx context.Context, accountID string) (days int, ok bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT log_retention_days FROM account_plans WHERE account_id = $1`, accountID).Scan(&days)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: plan: %w", err)
	}
	return days, true, nil
}

// MaxRetentionDays is the longest retention of any plan on record, 0 when there is none.
func (s *Store) MaxRetentionDays(ctx context.Context) (int, error) {
	var days int
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(log_retention_days), 0) FROM account_plans`).Scan(&days); err != nil {
		return 0, fmt.Errorf("store: longest retention: %w", err)
	}
	return days, nil
}
