package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// SaveApp records a created app. A delete that arrived first keeps the app deleted; a zone
// not given keeps the one recorded.
func (d queries) SaveApp(ctx context.Context, a logs.App, createdAt time.Time) error {
	_, err := d.q.Exec(ctx, `
		INSERT INTO apps (app_id, account_id, slug, created_at, zone) VALUES ($1, $2, $3, $4, NULLIF($5, ''))
		ON CONFLICT (app_id) DO UPDATE
		SET account_id = EXCLUDED.account_id, slug = EXCLUDED.slug, created_at = EXCLUDED.created_at,
		    zone = COALESCE(EXCLUDED.zone, apps.zone)`,
		a.ID, a.AccountID, a.Slug, createdAt, a.Zone)
	if err != nil {
		return fmt.Errorf("store: save app: %w", err)
	}
	return nil
}

// MarkAppDeleted records a deleted app, known or not, and queues its cleanup. A repeated
// delete queues the cleanup again, so its confirmation is published again.
func (d queries) MarkAppDeleted(ctx context.Context, a logs.App, deletedAt time.Time) error {
	_, err := d.q.Exec(ctx, `
		INSERT INTO apps (app_id, account_id, slug, deleted_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id) DO UPDATE
		SET deleted_at = COALESCE(apps.deleted_at, EXCLUDED.deleted_at), cleaned_at = NULL`,
		a.ID, a.AccountID, a.Slug, deletedAt)
	if err != nil {
		return fmt.Errorf("store: mark app deleted: %w", err)
	}
	return nil
}

// targetSQL finds the team's (accountID, $1) live app named slug ($2) and the retention of the
// account's plan copy (0 without one). Should an out-of-order pair of events leave two live
// rows, the newest app wins.
const targetSQL = `
		SELECT a.app_id, COALESCE(p.log_retention_days, 0) FROM apps a
		LEFT JOIN account_plans p ON p.account_id = a.account_id
		WHERE a.account_id = $1 AND a.slug = $2 AND a.deleted_at IS NULL
		ORDER BY a.created_at DESC NULLS LAST LIMIT 1`

// Target implements usecase.AppReader: the app and its account's plan copy in one statement.
func (s *Store) Target(ctx context.Context, accountID, slug string) (usecase.Target, error) {
	return scanTarget(s.pool.QueryRow(ctx, targetSQL, accountID, slug))
}

func scanTarget(row pgx.Row) (usecase.Target, error) {
	var (
		id   uuid.UUID
		days int
	)
	err := row.Scan(&id, &days)
	if errors.Is(err, pgx.ErrNoRows) {
		return usecase.Target{}, logs.ErrNotFound
	}
	if err != nil {
		return usecase.Target{}, fmt.Errorf("store: resolve app: %w", err)
	}
	return usecase.Target{AppID: id.String(), RetentionDays: days}, nil
}

// AppTeam finds the team owning the live app slug (slugs are global): the access gate's
// lookup. Should an out-of-order pair of events leave two live rows, the newest app wins.
func (s *Store) AppTeam(ctx context.Context, slug string) (string, bool, error) {
	var team string
	err := s.pool.QueryRow(ctx, `SELECT account_id FROM apps WHERE slug = $1 AND deleted_at IS NULL
		ORDER BY created_at DESC NULLS LAST LIMIT 1`, slug).Scan(&team)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: find app's team: %w", err)
	}
	return team, true, nil
}

// KnownAmong returns what the service knows of those of appIDs it has heard of, by their
// canonical string.
func (d queries) KnownAmong(ctx context.Context, appIDs []string) (map[string]usecase.Known, error) {
	ids := make([]uuid.UUID, len(appIDs))
	for i, id := range appIDs {
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, fmt.Errorf("store: app id %q: %w", id, err)
		}
		ids[i] = u
	}
	rows, err := d.q.Query(ctx, `SELECT app_id, deleted_at IS NOT NULL, COALESCE(zone, '') FROM apps WHERE app_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: known apps: %w", err)
	}
	known := map[string]usecase.Known{}
	for rows.Next() {
		var (
			id uuid.UUID
			k  usecase.Known
		)
		if err := rows.Scan(&id, &k.Deleted, &k.Zone); err != nil {
			return nil, fmt.Errorf("store: known apps: %w", err)
		}
		known[id.String()] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: known apps: %w", err)
	}
	return known, nil
}

// PendingCleanups lists deleted apps whose entries are not yet confirmed gone, oldest first.
func (s *Store) PendingCleanups(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT app_id FROM apps WHERE deleted_at IS NOT NULL AND cleaned_at IS NULL ORDER BY deleted_at`)
	if err != nil {
		return nil, fmt.Errorf("store: pending cleanups: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("store: pending cleanups: %w", err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out, nil
}

// MarkCleaned records that appID's cleanup is done. It reports false when another copy of
// the service recorded it first, so only one of them confirms.
func (d queries) MarkCleaned(ctx context.Context, appID string, at time.Time) (bool, error) {
	tag, err := d.q.Exec(ctx, `
		UPDATE apps SET cleaned_at = $2 WHERE app_id = $1 AND deleted_at IS NOT NULL AND cleaned_at IS NULL`, appID, at)
	if err != nil {
		return false, fmt.Errorf("store: mark cleaned: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
