package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/deploys/internal/preview"
)

const previewColumns = `id, name, app_id, account_id, status, deploy_id::text, coalesce(serving_deploy_id::text, ''),
	database, env_keys, ttl_seconds, expires_at, coalesce(error, ''), created_at, updated_at`

func scanPreview(row pgx.Row) (*preview.Preview, error) {
	var p preview.Preview
	var status, db string
	err := row.Scan(&p.ID, &p.Name, &p.AppID, &p.AccountID, &status, &p.DeployID, &p.ServingDeployID,
		&db, &p.EnvKeys, &p.TTLSeconds, &p.ExpiresAt, &p.Error, &p.CreatedAt, &p.UpdatedAt)
	if err != nil {
		return nil, err
	}
	p.Status, p.Database = preview.Status(status), preview.Database(db)
	p.ExpiresAt, p.CreatedAt, p.UpdatedAt = p.ExpiresAt.UTC(), p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	if p.EnvKeys == nil {
		p.EnvKeys = []string{}
	}
	return &p, nil
}

func getPreview(ctx context.Context, q rowQuerier, where string, args ...any) (*preview.Preview, error) {
	p, err := scanPreview(q.QueryRow(ctx, `SELECT `+previewColumns+` FROM previews `+where, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, preview.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: load preview: %w", err)
	}
	return p, nil
}

func listPreviews(ctx context.Context, q rowQuerier, where string, args ...any) ([]*preview.Preview, error) {
	rows, err := q.Query(ctx, `SELECT `+previewColumns+` FROM previews `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list previews: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*preview.Preview, error) { return scanPreview(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list previews: %w", err)
	}
	return out, nil
}

// previewByRef finds the app's preview by id, or failing that by name: the one holding the
// name now, else the newest that held it.
func previewByRef(ctx context.Context, q rowQuerier, lock, appID, ref string) (*preview.Preview, error) {
	return getPreview(ctx, q, `WHERE app_id = $1 AND (id = $2 OR name = $2)
		ORDER BY (id = $2) DESC, (status IN ('deploying', 'ready', 'failed')) DESC, created_at DESC LIMIT 1`+lock, appID, ref)
}

// PreviewByRef is the app's preview named by id or name; preview.ErrNotFound for none.
func (s *Store) PreviewByRef(ctx context.Context, appID, ref string) (*preview.Preview, error) {
	return previewByRef(ctx, s.pool, ``, appID, ref)
}

// PreviewByRef is PreviewByRef with a row lock.
func (t *txStore) PreviewByRef(ctx context.Context, appID, ref string) (*preview.Preview, error) {
	return previewByRef(ctx, t.tx, ` FOR UPDATE`, appID, ref)
}

// Preview loads a preview by id.
func (s *Store) Preview(ctx context.Context, id string) (*preview.Preview, error) {
	return getPreview(ctx, s.pool, `WHERE id = $1`, id)
}

// Preview loads a preview by id with a row lock.
func (t *txStore) Preview(ctx context.Context, id string) (*preview.Preview, error) {
	return getPreview(ctx, t.tx, `WHERE id = $1 FOR UPDATE`, id)
}

// maxListed bounds the previews list: the plan's limit bounds those still there, and expired
// ones past the newest hundred say nothing a customer needs.
const maxListed = 100

// Previews are the app's previews but the deleted ones, newest first, at most maxListed.
func (s *Store) Previews(ctx context.Context, appID string) ([]*preview.Preview, error) {
	return listPreviews(ctx, s.pool, `WHERE app_id = $1 AND status <> 'deleted' ORDER BY created_at DESC, id DESC LIMIT $2`, appID, maxListed)
}

// ActivePreviewByName is the preview holding name in the app now (deploying, ready or
// failed), locked, or nil.
func (t *txStore) ActivePreviewByName(ctx context.Context, appID, name string) (*preview.Preview, error) {
	p, err := getPreview(ctx, t.tx, `WHERE app_id = $1 AND name = $2 AND status IN ('deploying', 'ready', 'failed') FOR UPDATE`, appID, name)
	if errors.Is(err, preview.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// CountPreviews counts the app's previews the plan's limit counts: deploying or ready.
func (t *txStore) CountPreviews(ctx context.Context, appID string) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM previews WHERE app_id = $1 AND status IN ('deploying', 'ready')`, appID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count previews: %w", err)
	}
	return n, nil
}

// InsertPreview writes a new preview; inserted is false when its id is taken (the caller
// draws another), or a preview named by its id holds that name.
func (t *txStore) InsertPreview(ctx context.Context, p *preview.Preview) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO previews (id, app_id, account_id, name, status, deploy_id, serving_deploy_id, database,
		env_keys, ttl_seconds, expires_at, error, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
		p.ID, p.AppID, p.AccountID, p.Name, string(p.Status), p.DeployID, nullable(p.ServingDeployID), string(p.Database),
		keys(p.EnvKeys), p.TTLSeconds, p.ExpiresAt, nullable(p.Error), p.CreatedAt, p.UpdatedAt)
	if err != nil {
		return false, fmt.Errorf("store: insert preview: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// UpdatePreview writes a preview's changing members.
func (t *txStore) UpdatePreview(ctx context.Context, p *preview.Preview) error {
	_, err := t.tx.Exec(ctx, `UPDATE previews SET status = $2, deploy_id = $3, serving_deploy_id = $4, database = $5,
		env_keys = $6, ttl_seconds = $7, expires_at = $8, error = $9, updated_at = $10 WHERE id = $1`,
		p.ID, string(p.Status), p.DeployID, nullable(p.ServingDeployID), string(p.Database), keys(p.EnvKeys),
		p.TTLSeconds, p.ExpiresAt, nullable(p.Error), p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: update preview: %w", err)
	}
	return nil
}

// DuePreviews are previews past their expiry still there, locked and skipping those another
// replica's sweep holds: one replica expires each.
func (t *txStore) DuePreviews(ctx context.Context, now time.Time, limit int) ([]*preview.Preview, error) {
	return listPreviews(ctx, t.tx, `WHERE status IN ('deploying', 'ready', 'failed') AND expires_at <= $1
		ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
}

// MarkPreviewsDeleted ends every preview of a deleted app.
func (t *txStore) MarkPreviewsDeleted(ctx context.Context, appID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE previews SET status = 'deleted', updated_at = $2
		WHERE app_id = $1 AND status IN ('deploying', 'ready', 'failed')`, appID, at)
	if err != nil {
		return fmt.Errorf("store: delete the app's previews: %w", err)
	}
	return nil
}

func keys(k []string) []string {
	if k == nil {
		return []string{}
	}
	return k
}

// PrunePreviewRevisions deletes preview revisions nothing serves or will serve: finished ones
// that are neither their preview's current nor its served revision, and every finished one of
// a preview that is gone. Their artifacts become unreferenced (unless a promote's deploy
// shares them) and the artifact sweep removes them after its grace.
func (s *Store) PrunePreviewRevisions(ctx context.Context, limit int) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM deploys WHERE id IN (
		SELECT d.id FROM deploys d JOIN previews p ON p.id = d.preview_id
		WHERE d.preview_id IS NOT NULL AND d.status NOT IN ('building', 'releasing')
		  AND (p.status IN ('expired', 'deleted') OR (d.id <> p.deploy_id AND d.id IS DISTINCT FROM p.serving_deploy_id))
		LIMIT $1)`, limit)
	if err != nil {
		return 0, fmt.Errorf("store: prune preview revisions: %w", err)
	}
	return tag.RowsAffected(), nil
}
