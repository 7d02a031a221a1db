package store

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// CreateApp implements apps.Store.
func (s *Store) CreateApp(ctx context.Context, accountID string, build apps.BuildFunc) (apps.App, error) {
	var app apps.App
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		acct, err := lockAccount(ctx, tx, accountID)
		if err != nil {
			return err
		}
		var live int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM apps WHERE account_id = $1 AND deleted_at IS NULL`, accountID).Scan(&live); err != nil {
			return err
		}
		if app, err = build(acct, live); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, name, region, zone, status, framework, kind, current_deploy_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			app.ID, app.AccountID, app.Slug, app.Name, app.Region, app.Zone, app.Status, app.Framework, app.Kind,
			app.CurrentDeployID, app.CreatedAt, app.UpdatedAt)
		if err != nil {
			return err
		}
		return s.publish(ctx, tx, "apps.app.created", appCreated(app))
	})
	if pgstore.IsUniqueViolation(err, "apps_slug_held") {
		return apps.App{}, apps.ErrSlugTaken
	}
	if err != nil {
		return apps.App{}, wrap("create app", err)
	}
	return app, nil
}

// Apps implements apps.Store.
func (s *Store) Apps(ctx context.Context, accountID string) ([]apps.App, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+appColumns+` FROM apps
WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: list apps: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (apps.App, error) { return scanApp(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list apps: %w", err)
	}
	return out, nil
}

// AppBySlug implements apps.Store.
func (s *Store) AppBySlug(ctx context.Context, accountID, slug string) (apps.App, error) {
	a, err := scanApp(s.pool.QueryRow(ctx, `SELECT `+appColumns+` FROM apps
WHERE account_id = $1 AND slug = $2 AND deleted_at IS NULL`, accountID, slug))
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.App{}, apps.ErrNotFound
	}
	if err != nil {
		return apps.App{}, fmt.Errorf("store: app: %w", err)
	}
	return a, nil
}

// DeleteApp implements apps.Store.
func (s *Store) DeleteApp(ctx context.Context, accountID, slug string, cleanup []string, at time.Time) (apps.Deletion, error) {
	var d apps.Deletion
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		app, err := scanApp(tx.QueryRow(ctx, `SELECT `+appColumns+` FROM apps
WHERE account_id = $1 AND slug = $2 AND deleted_at IS NULL FOR UPDATE`, accountID, slug))
		if errors.Is(err, pgx.ErrNoRows) {
			return apps.ErrNotFound
		}
		if err != nil {
			return err
		}
		reclaimed := len(cleanup) == 0
		if _, err := tx.Exec(ctx, `UPDATE apps SET deleted_at = $2, updated_at = $2,
reclaimed_at = CASE WHEN $3 THEN $2::timestamptz END WHERE id = $1`, app.ID, at, reclaimed); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO app_cleanups (app_id, service)
SELECT $1, s FROM unnest($2::text[]) AS s ON CONFLICT DO NOTHING`, app.ID, cleanup); err != nil {
			return err
		}
		// The app's own data goes with it: its environment at once (nothing may read it
		// again), and its hostnames, whose edge routes end now.
		if _, err := tx.Exec(ctx, `DELETE FROM env_vars WHERE app_id = $1`, app.ID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM domains WHERE app_id = $1 RETURNING hostname, status = 'active'`, app.ID)
		if err != nil {
			return err
		}
		var active []string
		var host string
		var wasActive bool
		if _, err := pgx.ForEachRow(rows, []any{&host, &wasActive}, func() error {
			if wasActive {
				active = append(active, host) // pending ones were never served
			}
			return nil
		}); err != nil {
			return err
		}
		for _, h := range active {
			if err := s.publish(ctx, tx, "apps.domain.removed", domainRemoved(app, h, at)); err != nil {
				return err
			}
		}
		d = apps.Deletion{App: app, DeletedAt: at, Pending: cleanup, Reclaimed: reclaimed}
		return s.publish(ctx, tx, "apps.app.deleted", appDeleted(app, at))
	})
	if err != nil {
		return apps.Deletion{}, wrap("delete app", err)
	}
	return d, nil
}

// ConfirmCleanupTx records that service has cleaned up after the deleted app, and reclaims
// the tombstone (freeing its slug) when no confirmation is outstanding. It reports whether
// this confirmation reclaimed it. Unknown apps and services not awaited are ignored: a
// confirmation is a fact, and a repeated or stray one changes nothing.
func ConfirmCleanupTx(ctx context.Context, tx pgx.Tx, appID, service string, at time.Time) (bool, error) {
	// Lock the tombstone first: two services confirming at once must not each still see the
	// other's row, leaving the slug held for ever.
	var id string
	err := tx.QueryRow(ctx, `SELECT id::text FROM apps WHERE id = $1 AND deleted_at IS NOT NULL AND reclaimed_at IS NULL FOR UPDATE`, appID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM app_cleanups WHERE app_id = $1 AND service = $2`, appID, service); err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, `UPDATE apps SET reclaimed_at = $2
WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM app_cleanups WHERE app_id = $1)`, appID, at)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// wrap adds context to unexpected errors and leaves the domain's sentinels (and limit
// errors) for errors.Is and errors.As to find.
func wrap(op string, err error) error {
	return fmt.Errorf("store: %s: %w", op, err)
}
