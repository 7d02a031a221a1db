// Package store is the deploys service's Postgres persistence. Postgres error codes become
// domain errors here.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// Store implements usecase.Store over a pool connected as tori_deploys.
type Store struct{ pool *pgxpool.Pool }

// New wraps pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

var _ usecase.Store = (*Store)(nil)

// InTx runs fn in a transaction.
func (s *Store) InTx(ctx context.Context, fn func(usecase.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(&txStore{tx: tx}) })
}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func Bind(tx bus.Tx) usecase.Tx { return &txStore{tx: tx.Pgx()} }

type txStore struct{ tx pgx.Tx }

// Publish writes an event the use case chose to the outbox, in its transaction.
func (t *txStore) Publish(ctx context.Context, key string, msg proto.Message) error {
	return bus.Publish(ctx, t.tx, key, msg)
}

func (t *txStore) LockAccount(ctx context.Context, accountID string) error {
	_, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('deploys.account:' || $1, 0))`, accountID)
	return err
}

func (t *txStore) CountOpen(ctx context.Context, accountID string) (int64, error) {
	return countOpen(ctx, t.tx, accountID)
}

func (s *Store) CountOpen(ctx context.Context, accountID string) (int64, error) {
	return countOpen(ctx, s.pool, accountID)
}

func countOpen(ctx context.Context, q rowQuerier, accountID string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT count(*) FROM deploys WHERE account_id = $1 AND status IN ('building', 'releasing')`, accountID).Scan(&n)
	return n, err
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (t *txStore) Insert(ctx context.Context, d *deploy.Deploy) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO deploys (id, app_id, account_id, kind, status, image, release, rollback_of,
		error, artifact_key, env_sealed, env_key_id, env_for, created_at, updated_at, finished_at, live_at, framework, processes, preview_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		d.ID, d.AppID, d.AccountID, string(d.Kind), string(d.Status), nullable(d.Image), d.Release, nullable(d.RollbackOf),
		nullable(d.Error), nullable(d.ArtifactKey), d.Env.Sealed, nullable(d.Env.KeyID), nullable(d.Env.For), d.CreatedAt, d.UpdatedAt, d.FinishedAt, d.LiveAt,
		string(d.Framework.OrStatic()), processesJSON(d.Processes), nullable(d.PreviewID))
	if err != nil {
		return fmt.Errorf("store: insert deploy: %w", err)
	}
	return nil
}

func (t *txStore) Update(ctx context.Context, d *deploy.Deploy) error {
	_, err := t.tx.Exec(ctx, `UPDATE deploys SET status = $2, error = $3, updated_at = $4, finished_at = $5, live_at = $6,
		activating_at = $7 WHERE id = $1`, d.ID, string(d.Status), nullable(d.Error), d.UpdatedAt, d.FinishedAt, d.LiveAt, d.ActivatingAt)
	if err != nil {
		return fmt.Errorf("store: update deploy: %w", err)
	}
	return nil
}

// SetBuild records how the zone builds and starts the deploy.
func (t *txStore) SetBuild(ctx context.Context, deployID string, b deploy.Build) error {
	_, err := t.tx.Exec(ctx, `UPDATE deploys SET build_detected = $2, build_command = $3, build_start = $4 WHERE id = $1`,
		deployID, b.Detected, nullable(b.Command), b.Start)
	if err != nil {
		return fmt.Errorf("store: record the deploy's build: %w", err)
	}
	return nil
}

func (t *txStore) Deploy(ctx context.Context, id string) (*deploy.Deploy, error) {
	return getDeploy(ctx, t.tx, `WHERE id = $1 FOR UPDATE`, id)
}

func (s *Store) Deploy(ctx context.Context, id string) (*deploy.Deploy, error) {
	return getDeploy(ctx, s.pool, `WHERE id = $1`, id)
}

func (t *txStore) Live(ctx context.Context, appID string) (*deploy.Deploy, error) {
	return liveDeploy(ctx, t.tx, ` FOR UPDATE`, appID)
}

func (s *Store) Live(ctx context.Context, appID string) (*deploy.Deploy, error) {
	return liveDeploy(ctx, s.pool, ``, appID)
}

func liveDeploy(ctx context.Context, q rowQuerier, lock, appID string) (*deploy.Deploy, error) {
	d, err := getDeploy(ctx, q, `WHERE app_id = $1 AND status = 'live'`+lock, appID)
	if errors.Is(err, deploy.ErrNotFound) {
		return nil, nil
	}
	return d, err
}

func (t *txStore) OpenDeploys(ctx context.Context, appID string) ([]*deploy.Deploy, error) {
	return listDeploys(ctx, t.tx, `WHERE app_id = $1 AND status IN ('building', 'releasing') ORDER BY created_at, id FOR UPDATE`, appID)
}

// newestFirst orders a list by the table's columns, as deploys_by_app does: a bare "id"
// names the selected id::text, which the index does not hold, so each page was sorted again
// on top of the index scan (an incremental sort; cheap, but not the index's order).
const newestFirst = `deploys.created_at DESC, deploys.id DESC`

// List returns the app's deploys newest first. `before` must name a deploy of the app.
func (s *Store) List(ctx context.Context, appID string, limit int, before string) ([]*deploy.Deploy, error) {
	if before == "" {
		return listDeploys(ctx, s.pool, `WHERE app_id = $1 AND preview_id IS NULL ORDER BY `+newestFirst+` LIMIT $2`, appID, limit)
	}
	return listDeploys(ctx, s.pool, `WHERE app_id = $1 AND preview_id IS NULL AND (created_at, id) <
		(SELECT created_at, id FROM deploys WHERE id = $3 AND app_id = $1)
		ORDER BY `+newestFirst+` LIMIT $2`, appID, limit, before)
}

func (s *Store) Overdue(ctx context.Context, cutoff time.Time, limit int) ([]string, error) {
	return textColumn(ctx, s.pool, `SELECT id::text FROM deploys WHERE status IN ('building', 'releasing') AND created_at <= $1
		ORDER BY created_at LIMIT $2`, cutoff, limit)
}

func (s *Store) ArtifactReferenced(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deploys WHERE artifact_key = $1)`, key).Scan(&ok)
	return ok, err
}

func (s *Store) ArtifactsOf(ctx context.Context, appID string) ([]string, error) {
	return textColumn(ctx, s.pool, `SELECT DISTINCT artifact_key FROM deploys WHERE app_id = $1 AND artifact_key IS NOT NULL`, appID)
}

func (s *Store) AppsToClean(ctx context.Context, limit int) ([]string, error) {
	return textColumn(ctx, s.pool, `SELECT id FROM apps WHERE deleted_at IS NOT NULL AND cleaned_at IS NULL ORDER BY deleted_at LIMIT $1`, limit)
}

func (t *txStore) PurgeApp(ctx context.Context, appID string, at time.Time) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM formations WHERE app_id = $1`, appID); err != nil {
		return fmt.Errorf("store: purge formation: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM deploys WHERE app_id = $1`, appID); err != nil {
		return fmt.Errorf("store: purge deploys: %w", err)
	}
	// After the deploys, whose preview revisions refer to them.
	if _, err := t.tx.Exec(ctx, `DELETE FROM previews WHERE app_id = $1`, appID); err != nil {
		return fmt.Errorf("store: purge previews: %w", err)
	}
	_, err := t.tx.Exec(ctx, `UPDATE apps SET cleaned_at = $2 WHERE id = $1`, appID, at)
	return err
}

func textColumn(ctx context.Context, q rowQuerier, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
