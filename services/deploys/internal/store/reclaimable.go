package store

import (
	"context"
	"time"
)

// MarkReclaimable marks the artifacts of every account whose hold reached its reclaimable
// date by now, and clears the marks of accounts no longer so held; it returns how many deploys
// it changed.
func (s *Store) MarkReclaimable(ctx context.Context, now time.Time) (int64, error) {
	marked, err := s.pool.Exec(ctx, `UPDATE deploys d SET reclaimable_since = h.reclaimable_from
		FROM billing_holds h
		WHERE h.account_id = d.account_id AND h.active AND h.reclaimable_from <= $1
		  AND d.artifact_key IS NOT NULL AND d.reclaimable_since IS DISTINCT FROM h.reclaimable_from`, now)
	if err != nil {
		return 0, err
	}
	cleared, err := s.pool.Exec(ctx, `UPDATE deploys d SET reclaimable_since = NULL
		WHERE d.reclaimable_since IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM billing_holds h
			WHERE h.account_id = d.account_id AND h.active AND h.reclaimable_from <= $1)`, now)
	if err != nil {
		return 0, err
	}
	return marked.RowsAffected() + cleared.RowsAffected(), nil
}
