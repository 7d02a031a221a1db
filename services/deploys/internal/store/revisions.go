package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/deploys/internal/usecase"
)

// RecordRevisionPlan records the plan version a revision starts with.
func (t *txStore) RecordRevisionPlan(ctx context.Context, deployID string, version int64) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO revision_plans (deploy_id, plan_version) VALUES ($1, $2)
		ON CONFLICT (deploy_id) DO UPDATE SET plan_version = EXCLUDED.plan_version`, deployID, version)
	if err != nil {
		return fmt.Errorf("store: record revision plan: %w", err)
	}
	return nil
}

// StalePlanRevisions are live revisions of service apps started under an older plan version
// than their account's copy, whose app has no deploy under way.
func (s *Store) StalePlanRevisions(ctx context.Context, limit int) ([]usecase.StaleRevision, error) {
	rows, err := s.pool.Query(ctx, `SELECT d.id::text, d.app_id, d.account_id FROM deploys d
		JOIN apps a ON a.id = d.app_id AND a.kind = 'service' AND a.deleted_at IS NULL
		JOIN plans p ON p.account_id = d.account_id
		JOIN revision_plans r ON r.deploy_id = d.id
		WHERE d.status = 'live' AND r.plan_version < p.version
		  AND NOT EXISTS (SELECT 1 FROM deploys o WHERE o.app_id = d.app_id AND o.status IN ('building', 'releasing'))
		  AND NOT EXISTS (SELECT 1 FROM deploys t JOIN revision_plans tr ON tr.deploy_id = t.id
		                  WHERE t.app_id = d.app_id AND t.id <> d.id AND t.created_at >= d.live_at AND tr.plan_version >= p.version)
		ORDER BY d.live_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale revisions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (usecase.StaleRevision, error) {
		var s usecase.StaleRevision
		err := r.Scan(&s.DeployID, &s.AppID, &s.AccountID)
		return s, err
	})
}
