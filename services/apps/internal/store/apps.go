package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/apps"
)

const appColumns = `id::text, account_id, slug, name, region, zone, status, framework, kind,
	current_deploy_id, created_at, updated_at`

func scanApp(row pgx.Row) (apps.App, error) {
	var a apps.App
	err := row.Scan(&a.ID, &a.AccountID, &a.Slug, &a.Name, &a.Region, &a.Zone, &a.Status, &a.Framework,
		&a.Kind, &a.CurrentDeployID, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

// CountLiveApps implements usecase.Tx.
func (r *repo) CountLiveApps(ctx context.Context, accountID string) (int64, error) {
	var n int64
	if err := r.q.QueryRow(ctx, `SELECT count(*) FROM apps WHERE account_id = $1 AND deleted_at IS NULL`, accountID).Scan(&n); err != nil {
		return 0, wrap("count apps", err)
	}
	return n, nil
}

// InsertApp implements usecase.Tx.
func (r *repo) InsertApp(ctx context.Context, a apps.App) error {
	_, err := r.q.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, name, region, zone, status, framework, kind, current_deploy_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		a.ID, a.AccountID, a.Slug, a.Name, a.Region, a.Zone, a.Status, a.Framework, a.Kind,
		a.CurrentDeployID, a.CreatedAt, a.UpdatedAt)
	if pgstore.IsUniqueViolation(err, "apps_slug_held") {
		return apps.ErrSlugTaken
	}
	if err != nil {
		return wrap("create app", err)
	}
	return nil
}

// Apps implements usecase.Tx.
func (r *repo) Apps(ctx context.Context, teamIDs []string) ([]apps.App, error) {
	rows, err := r.q.Query(ctx, `SELECT `+appColumns+` FROM apps
WHERE account_id = ANY($1) AND deleted_at IS NULL ORDER BY created_at, id`, teamIDs)
	if err != nil {
		return nil, wrap("list apps", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (apps.App, error) { return scanApp(r) })
	if err != nil {
		return nil, wrap("list apps", err)
	}
	return out, nil
}

// liveSlug is the condition of a live app of a slug. A live app is never reclaimed (only a
// tombstone is), so saying so lets the planner use apps_slug_held, the unique index of held
// slugs: one index probe whatever the number of apps, where deleted_at alone matched no
// index and scanned the table (or, with the account, every app of the account).
const liveSlug = `slug = $1 AND deleted_at IS NULL AND reclaimed_at IS NULL`

// AppTeam implements usecase.Tx. A tombstone is no app: its slug answers 404 everywhere.
func (r *repo) AppTeam(ctx context.Context, slug string) (string, error) {
	var team string
	err := r.q.QueryRow(ctx, `SELECT account_id FROM apps WHERE `+liveSlug, slug).Scan(&team)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apps.ErrNotFound
	}
	if err != nil {
		return "", wrap("app team", err)
	}
	return team, nil
}

// AppBySlug implements usecase.Tx.
func (r *repo) AppBySlug(ctx context.Context, accountID, slug string) (apps.App, error) {
	return r.appBySlug(ctx, accountID, slug, "")
}

// LockLiveApp implements usecase.Tx.
func (r *repo) LockLiveApp(ctx context.Context, accountID, slug string) (apps.App, error) {
	return r.appBySlug(ctx, accountID, slug, " FOR UPDATE")
}

func (r *repo) appBySlug(ctx context.Context, accountID, slug, lock string) (apps.App, error) {
	a, err := scanApp(r.q.QueryRow(ctx, `SELECT `+appColumns+` FROM apps
WHERE `+liveSlug+` AND account_id = $2`+lock, slug, accountID))
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.App{}, apps.ErrNotFound
	}
	if err != nil {
		return apps.App{}, wrap("app", err)
	}
	return a, nil
}

// AppLive implements usecase.Tx.
func (r *repo) AppLive(ctx context.Context, appID string) (bool, error) {
	// A malformed id is a plain "no" rather than a cast error; only the canonical text of a
	// uuid names an app, as when the column was compared as text. Compared as a uuid, the id
	// is one probe of the primary key instead of a scan of every app.
	id, err := uuid.Parse(appID)
	if err != nil || id.String() != appID {
		return false, nil
	}
	var live bool
	err = r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM apps WHERE id = $1 AND deleted_at IS NULL)`, appID).Scan(&live)
	if err != nil {
		return false, wrap("app live", err)
	}
	return live, nil
}

// ShareLiveApp implements usecase.Tx. FOR SHARE waits for a delete in flight, which drops the
// app's variables.
func (r *repo) ShareLiveApp(ctx context.Context, appID string) (bool, error) {
	var one int
	err := r.q.QueryRow(ctx, `SELECT 1 FROM apps WHERE id = $1 AND deleted_at IS NULL FOR SHARE`, appID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap("share app", err)
	}
	return true, nil
}

// TombstoneApp implements usecase.Tx.
func (r *repo) TombstoneApp(ctx context.Context, appID string, at time.Time, cleanup []string, reclaimed bool) error {
	if _, err := r.q.Exec(ctx, `UPDATE apps SET deleted_at = $2, updated_at = $2,
reclaimed_at = CASE WHEN $3 THEN $2::timestamptz END WHERE id = $1`, appID, at, reclaimed); err != nil {
		return wrap("delete app", err)
	}
	if _, err := r.q.Exec(ctx, `INSERT INTO app_cleanups (app_id, service)
SELECT $1, s FROM unnest($2::text[]) AS s ON CONFLICT DO NOTHING`, appID, cleanup); err != nil {
		return wrap("delete app", err)
	}
	return nil
}

// LockTombstone implements usecase.Tx.
func (r *repo) LockTombstone(ctx context.Context, appID string) (bool, error) {
	var id string
	err := r.q.QueryRow(ctx, `SELECT id::text FROM apps WHERE id = $1 AND deleted_at IS NOT NULL AND reclaimed_at IS NULL FOR UPDATE`, appID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap("lock tombstone", err)
	}
	return true, nil
}

// ConfirmCleanup implements usecase.Tx.
func (r *repo) ConfirmCleanup(ctx context.Context, appID, service string) (int64, error) {
	if _, err := r.q.Exec(ctx, `DELETE FROM app_cleanups WHERE app_id = $1 AND service = $2`, appID, service); err != nil {
		return 0, wrap("confirm cleanup", err)
	}
	var pending int64
	if err := r.q.QueryRow(ctx, `SELECT count(*) FROM app_cleanups WHERE app_id = $1`, appID).Scan(&pending); err != nil {
		return 0, wrap("confirm cleanup", err)
	}
	return pending, nil
}

// Reclaim implements usecase.Tx.
func (r *repo) Reclaim(ctx context.Context, appID string, at time.Time) error {
	if _, err := r.q.Exec(ctx, `UPDATE apps SET reclaimed_at = $2 WHERE id = $1`, appID, at); err != nil {
		return wrap("reclaim", err)
	}
	return nil
}

// LockRevisionState implements usecase.Tx.
func (r *repo) LockRevisionState(ctx context.Context, appID string) (apps.RevisionState, bool, error) {
	var s apps.RevisionState
	var statusAt, currentAt *time.Time
	err := r.q.QueryRow(ctx, `SELECT status, status_at, current_deploy_id, current_deploy_at, framework
FROM apps WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, appID).Scan(&s.Status, &statusAt, &s.CurrentDeployID, &currentAt, &s.Framework)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, wrap("lock app for revision", err)
	}
	if statusAt != nil {
		s.StatusAt = *statusAt
	}
	if currentAt != nil {
		s.CurrentAt = *currentAt
	}
	return s, true, nil
}

// SaveRevisionState implements usecase.Tx. A current deploy's time is kept only with a current
// deploy.
func (r *repo) SaveRevisionState(ctx context.Context, appID string, s apps.RevisionState, at time.Time) error {
	var currentAt *time.Time
	if s.CurrentDeployID != nil {
		currentAt = &s.CurrentAt
	}
	_, err := r.q.Exec(ctx, `UPDATE apps SET status = $2, status_at = $3, current_deploy_id = $4, current_deploy_at = $5, updated_at = $6,
framework = $7 WHERE id = $1`, appID, s.Status, s.StatusAt, s.CurrentDeployID, currentAt, at, s.Framework)
	if err != nil {
		return wrap("apply revision", err)
	}
	return nil
}
