package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/apps/internal/apps"
)

// ApplyRevisionTx applies ev to the app's status and current deploy in tx, under a row lock.
// Deleted and unknown apps are left alone: their deploys' late events concern no one.
func ApplyRevisionTx(ctx context.Context, tx pgx.Tx, appID string, ev apps.RevisionEvent, now time.Time) error {
	var s apps.RevisionState
	var statusAt, currentAt *time.Time
	err := tx.QueryRow(ctx, `SELECT status, status_at, current_deploy_id, current_deploy_at
FROM apps WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, appID).Scan(&s.Status, &statusAt, &s.CurrentDeployID, &currentAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return wrap("lock app for revision", err)
	}
	if statusAt != nil {
		s.StatusAt = *statusAt
	}
	if currentAt != nil {
		s.CurrentAt = *currentAt
	}
	next := s.Apply(ev)
	if next.Status == s.Status && next.StatusAt.Equal(s.StatusAt) && next.CurrentAt.Equal(s.CurrentAt) {
		return nil
	}
	var nextCurrentAt *time.Time
	if next.CurrentDeployID != nil {
		nextCurrentAt = &next.CurrentAt
	}
	_, err = tx.Exec(ctx, `UPDATE apps SET status = $2, status_at = $3, current_deploy_id = $4, current_deploy_at = $5, updated_at = $6
WHERE id = $1`, appID, next.Status, next.StatusAt, next.CurrentDeployID, nextCurrentAt, now)
	if err != nil {
		return wrap("apply revision", err)
	}
	return nil
}
