// Package store is the databases service's Postgres adaptor: its schema and migrations and
// the database records. It implements the ports of internal/usecase; Postgres errors become
// domain errors here.
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/databases/internal/database"
	"tori.dev/services/databases/internal/usecase"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the databases schema's tables; pass it to pgstore.Connect after
// bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("databases", migrationFiles)

// Service is the databases service's schema and database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "databases", Role: "tori_databases", Password: password}
}

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type queries struct{ q querier }

// Store reads and writes the databases schema.
type Store struct {
	queries
	pool *pgxpool.Pool
}

var _ usecase.Store = (*Store)(nil)

// New wraps a pool connected as the databases role.
func New(pool *pgxpool.Pool) *Store { return &Store{queries: queries{q: pool}, pool: pool} }

// Tx is the store inside one transaction.
type Tx struct {
	queries
	tx pgx.Tx
}

var _ usecase.Tx = Tx{}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func (s *Store) Bind(tx bus.Tx) usecase.Tx { return Tx{queries: queries{q: tx.Pgx()}, tx: tx.Pgx()} }

// InTx implements usecase.Store.
func (s *Store) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(Tx{queries: queries{q: tx}, tx: tx}) })
}

// Publish implements usecase.Tx: the event goes to the outbox in this transaction.
func (t Tx) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return bus.Publish(ctx, t.tx, routingKey, msg)
}

const columns = `id::text, app_id::text, account_id, zone, name, status, coalesce(message, ''),
	connection_limit, max_bytes, created_at, updated_at, app_deleted, plan_version`

func scan(row pgx.Row) (database.Database, error) {
	var d database.Database
	var status string
	err := row.Scan(&d.ID, &d.AppID, &d.AccountID, &d.Zone, &d.Name, &status, &d.Message,
		&d.Limits.Connections, &d.Limits.MaxBytes, &d.CreatedAt, &d.UpdatedAt, &d.AppDeleted, &d.Limits.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return database.Database{}, database.ErrNotFound
	}
	if err != nil {
		return database.Database{}, fmt.Errorf("store: read database: %w", err)
	}
	d.Status = database.Status(status)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// ByApp implements usecase.Store.
func (q queries) ByApp(ctx context.Context, appID string) (database.Database, error) {
	return scan(q.q.QueryRow(ctx, `SELECT `+columns+` FROM databases WHERE app_id = $1`, appID))
}

// LockByApp implements usecase.Tx.
func (q queries) LockByApp(ctx context.Context, appID string) (database.Database, error) {
	return scan(q.q.QueryRow(ctx, `SELECT `+columns+` FROM databases WHERE app_id = $1 FOR UPDATE`, appID))
}

// Insert implements usecase.Tx.
func (q queries) Insert(ctx context.Context, d database.Database) error {
	_, err := q.q.Exec(ctx, `
		INSERT INTO databases (id, app_id, account_id, zone, name, status, message,
			connection_limit, max_bytes, created_at, updated_at, plan_version)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), $8, $9, $10, $11, $12)`,
		d.ID, d.AppID, d.AccountID, d.Zone, d.Name, string(d.Status), d.Message,
		d.Limits.Connections, d.Limits.MaxBytes, d.CreatedAt, d.UpdatedAt, d.Limits.Version)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "databases_one_per_app" {
		return database.ErrExists
	}
	if err != nil {
		return fmt.Errorf("store: insert database: %w", err)
	}
	return nil
}

// Update implements usecase.Tx.
func (q queries) Update(ctx context.Context, d database.Database) error {
	tag, err := q.q.Exec(ctx, `
		UPDATE databases SET status = $2, message = nullif($3, ''), updated_at = $4, app_deleted = $5,
			connection_limit = $6, max_bytes = $7, plan_version = $8
		WHERE id = $1`,
		d.ID, string(d.Status), d.Message, d.UpdatedAt, d.AppDeleted, d.Limits.Connections, d.Limits.MaxBytes, d.Limits.Version)
	if err != nil {
		return fmt.Errorf("store: update database: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return database.ErrNotFound
	}
	return nil
}

// LockByID implements usecase.Tx.
func (q queries) LockByID(ctx context.Context, id string) (database.Database, error) {
	return scan(q.q.QueryRow(ctx, `SELECT `+columns+` FROM databases WHERE id = $1 FOR UPDATE`, id))
}

// Remove implements usecase.Tx.
func (q queries) Remove(ctx context.Context, id string) error {
	if _, err := q.q.Exec(ctx, `DELETE FROM databases WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: remove database: %w", err)
	}
	return nil
}

// LockByAccount implements usecase.Tx.
func (q queries) LockByAccount(ctx context.Context, accountID string) ([]database.Database, error) {
	rows, err := q.q.Query(ctx, `SELECT `+columns+` FROM databases WHERE account_id = $1 ORDER BY id FOR UPDATE`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: account databases: %w", err)
	}
	defer rows.Close()
	var out []database.Database
	for rows.Next() {
		d, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

const dumpColumns = `id::text, database_id::text, status, size_bytes, object_key, created_at`

func scanDump(row pgx.Row) (database.Dump, error) {
	var d database.Dump
	var status string
	err := row.Scan(&d.ID, &d.DatabaseID, &status, &d.SizeBytes, &d.ObjectKey, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return database.Dump{}, database.ErrNotFound
	}
	if err != nil {
		return database.Dump{}, fmt.Errorf("store: read dump: %w", err)
	}
	d.Status, d.CreatedAt = database.DumpStatus(status), d.CreatedAt.UTC()
	return d, nil
}

// InsertDump implements usecase.Tx.
func (q queries) InsertDump(ctx context.Context, d database.Dump) error {
	_, err := q.q.Exec(ctx, `INSERT INTO dumps (id, database_id, status, size_bytes, object_key, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		d.ID, d.DatabaseID, string(d.Status), d.SizeBytes, d.ObjectKey, d.CreatedAt)
	if err != nil {
		return fmt.Errorf("store: insert dump: %w", err)
	}
	return nil
}

// Dumps implements usecase.Store and usecase.Tx: a database's dumps, newest first.
func (q queries) Dumps(ctx context.Context, databaseID string) ([]database.Dump, error) {
	rows, err := q.q.Query(ctx, `SELECT `+dumpColumns+` FROM dumps WHERE database_id = $1 ORDER BY created_at DESC, id DESC`, databaseID)
	if err != nil {
		return nil, fmt.Errorf("store: dumps: %w", err)
	}
	defer rows.Close()
	var out []database.Dump
	for rows.Next() {
		d, err := scanDump(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Dump implements usecase.Store.
func (q queries) Dump(ctx context.Context, id string) (database.Dump, error) {
	return scanDump(q.q.QueryRow(ctx, `SELECT `+dumpColumns+` FROM dumps WHERE id = $1`, id))
}

// LockDump implements usecase.Tx.
func (q queries) LockDump(ctx context.Context, id string) (database.Dump, error) {
	return scanDump(q.q.QueryRow(ctx, `SELECT `+dumpColumns+` FROM dumps WHERE id = $1 FOR UPDATE`, id))
}

// FinishDump implements usecase.Tx.
func (q queries) FinishDump(ctx context.Context, d database.Dump, at time.Time) error {
	_, err := q.q.Exec(ctx, `UPDATE dumps SET status = $2, size_bytes = $3, finished_at = $4 WHERE id = $1`, d.ID, string(d.Status), d.SizeBytes, at)
	if err != nil {
		return fmt.Errorf("store: finish dump: %w", err)
	}
	return nil
}

// DeleteDumps implements usecase.Tx.
func (q queries) DeleteDumps(ctx context.Context, ids []string) error {
	if _, err := q.q.Exec(ctx, `DELETE FROM dumps WHERE id = ANY($1::uuid[])`, ids); err != nil {
		return fmt.Errorf("store: delete dumps: %w", err)
	}
	return nil
}

// NightlyCandidates implements usecase.Store: every ready or read-only database with the time
// of its newest dump (zero when none).
func (q queries) NightlyCandidates(ctx context.Context) ([]usecase.Candidate, error) {
	rows, err := q.q.Query(ctx, `
		SELECT d.id::text, d.app_id::text, d.account_id, d.zone, d.name, d.status, coalesce(d.message, ''),
			d.connection_limit, d.max_bytes, d.created_at, d.updated_at, d.app_deleted, d.plan_version,
			coalesce(max(u.created_at), 'epoch'::timestamptz)
		FROM databases d LEFT JOIN dumps u ON u.database_id = d.id
		WHERE d.status IN ('ready', 'read_only')
		GROUP BY d.id ORDER BY d.id`)
	if err != nil {
		return nil, fmt.Errorf("store: nightly candidates: %w", err)
	}
	defer rows.Close()
	var out []usecase.Candidate
	for rows.Next() {
		var c usecase.Candidate
		var status string
		if err := rows.Scan(&c.Database.ID, &c.Database.AppID, &c.Database.AccountID, &c.Database.Zone, &c.Database.Name, &status, &c.Database.Message,
			&c.Database.Limits.Connections, &c.Database.Limits.MaxBytes, &c.Database.CreatedAt, &c.Database.UpdatedAt, &c.Database.AppDeleted, &c.Database.Limits.Version, &c.LastDump); err != nil {
			return nil, fmt.Errorf("store: nightly candidates: %w", err)
		}
		c.Database.Status = database.Status(status)
		out = append(out, c)
	}
	return out, rows.Err()
}

const restoreColumns = `id::text, database_id::text, dump_id::text, name, status, coalesce(message, ''), created_at`

func scanRestore(row pgx.Row) (database.Restore, error) {
	var r database.Restore
	var status string
	err := row.Scan(&r.ID, &r.DatabaseID, &r.DumpID, &r.Name, &status, &r.Message, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return database.Restore{}, database.ErrNotFound
	}
	if err != nil {
		return database.Restore{}, fmt.Errorf("store: read restore: %w", err)
	}
	r.Status, r.CreatedAt = database.RestoreStatus(status), r.CreatedAt.UTC()
	return r, nil
}

// InsertRestore implements usecase.Tx; database.ErrRestoreExists when the database has one.
func (q queries) InsertRestore(ctx context.Context, r database.Restore) error {
	_, err := q.q.Exec(ctx, `INSERT INTO restores (id, database_id, dump_id, name, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		r.ID, r.DatabaseID, r.DumpID, r.Name, string(r.Status), r.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "restores_one_per_database" {
		return database.ErrRestoreExists
	}
	if err != nil {
		return fmt.Errorf("store: insert restore: %w", err)
	}
	return nil
}

// Restores implements usecase.Store: a database's restores (at most one).
func (q queries) Restores(ctx context.Context, databaseID string) ([]database.Restore, error) {
	rows, err := q.q.Query(ctx, `SELECT `+restoreColumns+` FROM restores WHERE database_id = $1 ORDER BY created_at DESC`, databaseID)
	if err != nil {
		return nil, fmt.Errorf("store: restores: %w", err)
	}
	defer rows.Close()
	var out []database.Restore
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LockRestore implements usecase.Tx.
func (q queries) LockRestore(ctx context.Context, id string) (database.Restore, error) {
	return scanRestore(q.q.QueryRow(ctx, `SELECT `+restoreColumns+` FROM restores WHERE id = $1 FOR UPDATE`, id))
}

// UpdateRestore implements usecase.Tx.
func (q queries) UpdateRestore(ctx context.Context, r database.Restore) error {
	if _, err := q.q.Exec(ctx, `UPDATE restores SET status = $2, message = nullif($3, '') WHERE id = $1`, r.ID, string(r.Status), r.Message); err != nil {
		return fmt.Errorf("store: update restore: %w", err)
	}
	return nil
}

// RemoveRestore implements usecase.Tx.
func (q queries) RemoveRestore(ctx context.Context, id string) error {
	if _, err := q.q.Exec(ctx, `DELETE FROM restores WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: remove restore: %w", err)
	}
	return nil
}
