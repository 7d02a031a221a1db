// Package store is the apps service's Postgres store: the pgx implementation of the ports
// internal/usecase declares. It translates Postgres errors into the domain's sentinel errors and
// writes the events the use cases publish to the bus outbox in their own transaction; it
// decides nothing.
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/usecase"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the apps schema; pgstore.Setup runs it after bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("apps", migrationFiles)

// Service names the apps schema and its role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "apps", Role: "tori_apps", Password: password}
}

var (
	_ usecase.Store         = (*Store)(nil)
	_ usecase.RotationStore = (*Store)(nil)
)

// querier is what both a pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// repo runs queries on the pool or, inside a transaction, on it.
type repo struct {
	q  querier
	tx pgx.Tx // nil outside a transaction
}

// Store is the Postgres store.
type Store struct {
	repo
	pool *pgxpool.Pool
}

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{repo: repo{q: pool}, pool: pool} }

// Pool is the store's pool, for the bus's consumers and relay.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// InTx runs fn in one transaction, committed when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(&repo{q: tx, tx: tx}) })
}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func Bind(tx bus.Tx) usecase.Tx { return &repo{q: tx.Pgx(), tx: tx.Pgx()} }

// errOutsideTx guards the outbox: an event must commit with its change.
var errOutsideTx = errors.New("store: publish outside a transaction")

// Publish implements usecase.Publisher through the bus outbox.
func (r *repo) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	if r.tx == nil {
		return errOutsideTx
	}
	return bus.Publish(ctx, r.tx, routingKey, msg)
}

// wrap adds context to unexpected errors and leaves the domain's sentinels for errors.Is to
// find.
func wrap(op string, err error) error {
	return fmt.Errorf("store: %s: %w", op, err)
}
