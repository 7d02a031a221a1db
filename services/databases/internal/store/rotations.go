package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/databases/internal/database"
)

const rotationColumns = `database_id::text, app_id::text, requested_at, rotated_at`

func scanRotation(row pgx.Row) (database.Rotation, error) {
	var r database.Rotation
	var rotated *time.Time
	if err := row.Scan(&r.DatabaseID, &r.AppID, &r.RequestedAt, &rotated); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return database.Rotation{}, database.ErrNotFound
		}
		return database.Rotation{}, err
	}
	if rotated != nil {
		r.RotatedAt = rotated.UTC()
	}
	r.RequestedAt = r.RequestedAt.UTC()
	return r, nil
}

// PutRotation implements usecase.Tx: a new rotation replaces a pending one (and the deploys
// noted for it).
func (q queries) PutRotation(ctx context.Context, r database.Rotation) error {
	if _, err := q.q.Exec(ctx, `DELETE FROM rotation_deploys WHERE database_id = $1`, r.DatabaseID); err != nil {
		return err
	}
	_, err := q.q.Exec(ctx, `
		INSERT INTO rotations (database_id, app_id, requested_at, rotated_at) VALUES ($1, $2, $3, NULL)
		ON CONFLICT (database_id) DO UPDATE SET requested_at = excluded.requested_at, rotated_at = NULL`,
		r.DatabaseID, r.AppID, r.RequestedAt)
	return err
}

// LockRotation implements usecase.Tx.
func (q queries) LockRotation(ctx context.Context, databaseID string) (database.Rotation, error) {
	return scanRotation(q.q.QueryRow(ctx, `SELECT `+rotationColumns+` FROM rotations WHERE database_id = $1 FOR UPDATE`, databaseID))
}

// LockRotationByApp implements usecase.Tx.
func (q queries) LockRotationByApp(ctx context.Context, appID string) (database.Rotation, error) {
	return scanRotation(q.q.QueryRow(ctx, `SELECT `+rotationColumns+` FROM rotations WHERE app_id = $1 FOR UPDATE`, appID))
}

// LockRotationOfDeploy implements usecase.Tx: the rotation whose next deploy deployID is.
func (q queries) LockRotationOfDeploy(ctx context.Context, deployID string) (database.Rotation, error) {
	return scanRotation(q.q.QueryRow(ctx, `SELECT r.database_id::text, r.app_id::text, r.requested_at, r.rotated_at
		FROM rotations r JOIN rotation_deploys d USING (database_id) WHERE d.deploy_id = $1 FOR UPDATE OF r`, deployID))
}

// ConfirmRotation implements usecase.Tx.
func (q queries) ConfirmRotation(ctx context.Context, databaseID string, at time.Time) error {
	_, err := q.q.Exec(ctx, `UPDATE rotations SET rotated_at = $2 WHERE database_id = $1`, databaseID, at)
	return err
}

// AddRotationDeploy implements usecase.Tx; noting a deploy again changes nothing.
func (q queries) AddRotationDeploy(ctx context.Context, databaseID, deployID string) error {
	_, err := q.q.Exec(ctx, `INSERT INTO rotation_deploys (deploy_id, database_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, deployID, databaseID)
	return err
}

// RemoveRotation implements usecase.Tx.
func (q queries) RemoveRotation(ctx context.Context, databaseID string) error {
	_, err := q.q.Exec(ctx, `DELETE FROM rotations WHERE database_id = $1`, databaseID)
	return err
}

// ConfirmedRotations implements usecase.Store: the rotations the zone has put in place.
func (q queries) ConfirmedRotations(ctx context.Context) ([]database.Rotation, error) {
	rows, err := q.q.Query(ctx, `SELECT `+rotationColumns+` FROM rotations WHERE rotated_at IS NOT NULL ORDER BY rotated_at`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (database.Rotation, error) { return scanRotation(row) })
}
