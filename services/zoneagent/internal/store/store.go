// Package store is the zone agent's Postgres record of revisions, live routes and release
// Jobs, in a schema of its own (zoneagent_<zone>).
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the zone agent's tables; they run after bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("zoneagent", migrationFiles)

// Service is the zone's schema and role; one per zone, so several agents can share a server.
func Service(zone, password string) pgstore.Service {
	z := strings.ReplaceAll(strings.ToLower(zone), "-", "_")
	return pgstore.Service{Schema: "zoneagent_" + z, Role: "tori_zoneagent_" + z, Password: password}
}

// Setup creates and migrates the zone's schema and returns a pool as its role; tests use it
// with an admin URL.
func Setup(ctx context.Context, adminURL, zone, password string) (*pgxpool.Pool, error) {
	return pgstore.Setup(ctx, adminURL, Service(zone, password), pgstore.WithMigrations(bus.Migrations, Migrations))
}

// Connect opens the zone's pool as its own role (url from ZONEAGENT_DATABASE_URL) and
// migrates its schema.
func Connect(ctx context.Context, url, zone string) (*pgxpool.Pool, error) {
	return pgstore.Connect(ctx, url, Service(zone, "").Schema, pgstore.WithMigrations(bus.Migrations, Migrations))
}

// Store is the zone's record (usecase.Store) on its pool.
type Store struct{ pool *pgxpool.Pool }

var (
	_ usecase.Store = (*Store)(nil)
	_ usecase.Tx    = Tx{}
)

// New wraps pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Tx is usecase.Tx in one Postgres transaction.
type Tx struct {
	tx pgx.Tx
	// after has a function run once the transaction commits (AfterCommit).
	after func(func())
}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func Bind(tx bus.Tx) Tx { return Tx{tx: tx.Pgx(), after: tx.AfterCommit} }

// InTx runs fn in a transaction of its own.
func (s *Store) InTx(ctx context.Context, fn func(usecase.Tx) error) error {
	var after []func()
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		after = after[:0] // an attempt that was retried asked for nothing
		return fn(Tx{tx: tx, after: func(f func()) { after = append(after, f) }})
	})
	if err != nil {
		return err
	}
	for _, f := range after {
		f()
	}
	return nil
}

// AfterCommit has fn run once the transaction has committed, never if it rolls back: the
// edge's table reads what the transaction recorded then (usecase/routing.go). A Tx made
// without a commit to wait for runs fn at once.
func (t Tx) AfterCommit(fn func()) {
	if t.after == nil {
		fn()
		return
	}
	t.after(fn)
}

// Publish writes an event to the outbox in the transaction.
func (t Tx) Publish(ctx context.Context, key string, msg proto.Message) error {
	return bus.Publish(ctx, t.tx, key, msg)
}

// AddRevision records a start command; a redelivery changes nothing. A command for a deleted
// app is dropped (false).
func (t Tx) AddRevision(ctx context.Context, r revision.Revision) (bool, error) {
	var deleted bool
	if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deleted_apps WHERE app_id = $1)`, r.AppID).Scan(&deleted); err != nil {
		return false, err
	}
	if deleted {
		return false, nil
	}
	processes, err := processesJSON(r.Processes)
	if err != nil {
		return false, err
	}
	_, err = t.tx.Exec(ctx, `INSERT INTO revisions (deploy_id, app_id, slug, kind, artifact_key, image, release, release_given,
		env_sealed, env_key_id, env_deploy_id, build_minutes, min_scale, cpu, deadline, clear_cache, processes, instance_memory_bytes,
		preview_id, built_from_deploy_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) ON CONFLICT (deploy_id) DO NOTHING`,
		r.DeployID, r.AppID, r.Slug, r.Kind, r.ArtifactKey, r.Image, r.Release, r.ReleaseGiven, r.EnvSealed, r.EnvKeyID,
		r.EnvDeployID, r.BuildMinutes, r.MinScale, r.CPU, r.Deadline, r.ClearCache, processes, r.InstanceMemoryBytes,
		r.PreviewID, r.BuiltFromDeployID)
	return err == nil, err
}

// Want marks a revision to be activated or discarded.
func (t Tx) Want(ctx context.Context, deployID string, activate bool) error {
	col := "discard_wanted"
	if activate {
		col = "activate_wanted"
	}
	_, err := t.tx.Exec(ctx, `UPDATE revisions SET `+col+` = true, updated_at = now() WHERE deploy_id = $1`, deployID)
	return err
}

// DeleteApp forgets the app's route, stops serving its hostnames as of deletedAt (kept as
// inactive, so that none of their older events can bring them back), marks its revisions
// discarded and puts its uid in quarantine.
func (t Tx) DeleteApp(ctx context.Context, appID string, deletedAt time.Time) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO deleted_apps (app_id) VALUES ($1) ON CONFLICT DO NOTHING`, appID); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM live WHERE app_id = $1`, appID); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE domains SET active = false, changed_at = greatest(changed_at, $2)
		WHERE app_id = $1`, appID, deletedAt); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE revisions SET discard_wanted = true, updated_at = now() WHERE app_id = $1`, appID); err != nil {
		return err
	}
	// The app's uid goes to quarantine in the same record: its processes and files are gone
	// by now (usecase.Agent.DeleteApp stops them first), and a handler that asked the pool for
	// a second connection while holding this one could wait for ever.
	if _, err := t.tx.Exec(ctx, freeUIDStatement, appID); err != nil {
		return err
	}
	return t.removeAppPreviews(ctx, appID) // previews.go
}

// SetState records a move from → to; the record must still be in from.
func (t Tx) SetState(ctx context.Context, deployID string, from, to revision.State) error {
	tag, err := t.tx.Exec(ctx, `UPDATE revisions SET state = $3, updated_at = now() WHERE deploy_id = $1 AND state = $2`,
		deployID, from, to)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s is no longer %s", ErrStale, deployID, from)
	}
	return nil
}

// Revision loads one revision, locked.
func (t Tx) Revision(ctx context.Context, deployID string) (revision.Revision, error) {
	return scanRevision(t.tx.QueryRow(ctx, `SELECT `+revisionColumns+` FROM revisions WHERE deploy_id = $1 FOR UPDATE`, deployID))
}

// Live returns the app's live route, locked, or ok false.
func (t Tx) Live(ctx context.Context, appID string) (revision.Route, bool, error) {
	var r revision.Route
	err := t.tx.QueryRow(ctx, `SELECT app_id, slug, deploy_id, kind FROM live WHERE app_id = $1 FOR UPDATE`, appID).
		Scan(&r.AppID, &r.Slug, &r.DeployID, &r.Kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return revision.Route{}, false, nil
	}
	return r, err == nil, err
}

// SetLive points the app's route at a revision.
func (t Tx) SetLive(ctx context.Context, r revision.Route) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO live (app_id, slug, deploy_id, kind) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id) DO UPDATE SET slug = EXCLUDED.slug, deploy_id = EXCLUDED.deploy_id, kind = EXCLUDED.kind`,
		r.AppID, r.Slug, r.DeployID, r.Kind)
	return err
}

// ReleaseJob returns the state of the named Job, or "" when it never ran.
func (t Tx) ReleaseJob(ctx context.Context, name string) (revision.JobState, error) {
	var state revision.JobState
	err := t.tx.QueryRow(ctx, `SELECT state FROM release_jobs WHERE name = $1`, name).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return state, err
}

// SetReleaseJob records the named Job's state.
func (t Tx) SetReleaseJob(ctx context.Context, name, deployID string, state revision.JobState) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO release_jobs (name, deploy_id, state) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET state = EXCLUDED.state,
		finished_at = CASE WHEN EXCLUDED.state = $4 THEN NULL ELSE now() END`, name, deployID, state, revision.JobRunning)
	return err
}

// Work returns revisions that need the worker: to prepare, activate or discard.
func (s *Store) Work(ctx context.Context) ([]revision.Revision, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+revisionColumns+` FROM revisions
		WHERE state IN ('pending', 'preparing', 'ready') ORDER BY created_at, deploy_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []revision.Revision
	for rows.Next() {
		r, err := scanRevision(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Routes returns every live route.
func (s *Store) Routes(ctx context.Context) ([]revision.Route, error) {
	rows, err := s.pool.Query(ctx, `SELECT app_id, slug, deploy_id, kind FROM live`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (revision.Route, error) {
		var x revision.Route
		err := r.Scan(&x.AppID, &x.Slug, &x.DeployID, &x.Kind)
		return x, err
	})
}

// Revision loads one revision without a lock.
func (s *Store) Revision(ctx context.Context, deployID string) (revision.Revision, error) {
	return scanRevision(s.pool.QueryRow(ctx, `SELECT `+revisionColumns+` FROM revisions WHERE deploy_id = $1`, deployID))
}

const revisionColumns = `deploy_id, app_id, slug, kind, artifact_key, image, release, release_given, env_sealed,
	env_key_id, env_deploy_id, build_minutes, min_scale, cpu, deadline, state, activate_wanted, discard_wanted, clear_cache,
	processes, instance_memory_bytes, preview_id, built_from_deploy_id`

func scanRevision(row pgx.Row) (revision.Revision, error) {
	var r revision.Revision
	var processes []byte
	err := row.Scan(&r.DeployID, &r.AppID, &r.Slug, &r.Kind, &r.ArtifactKey, &r.Image, &r.Release, &r.ReleaseGiven,
		&r.EnvSealed, &r.EnvKeyID, &r.EnvDeployID, &r.BuildMinutes, &r.MinScale, &r.CPU, &r.Deadline, &r.State,
		&r.ActivateWanted, &r.DiscardWanted, &r.ClearCache, &processes, &r.InstanceMemoryBytes, &r.PreviewID, &r.BuiltFromDeployID)
	if errors.Is(err, pgx.ErrNoRows) {
		return revision.Revision{}, revision.ErrNotFound
	}
	if err != nil {
		return revision.Revision{}, fmt.Errorf("store: revision: %w", err)
	}
	if r.Processes, err = parseProcesses(processes); err != nil {
		return revision.Revision{}, err
	}
	return r, nil
}

// ErrStale is a state change whose revision moved meanwhile: the caller read it before
// another change committed, and reads it again on its next pass.
var ErrStale = errors.New("store: the revision's state changed meanwhile")
