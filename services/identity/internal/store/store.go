// Package store keeps the identity service's state in its own Postgres schema. It
// implements usecase.Store; Postgres conditions become the domain's sentinel errors here.
package store

import (
	"context"
	"embed"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/identity/internal/usecase"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are identity's own tables; pgstore.Setup runs them after bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("identity", migrationFiles)

// Service is identity's schema and role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "identity", Role: "tori_identity", Password: password}
}

// querier is what both a pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// repo runs queries on a pool or, inside InTx, on a transaction.
type repo struct {
	q  querier
	tx pgx.Tx // nil outside a transaction
}

// Store is the Postgres implementation of usecase.Store.
type Store struct {
	repo
	pool *pgxpool.Pool
}

var _ usecase.Store = (*Store)(nil)

// New wraps a pool connected as the identity role.
func New(pool *pgxpool.Pool) *Store {
	return &Store{repo: repo{q: pool}, pool: pool}
}

// InTx runs fn in one transaction, committed when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx usecase.Repo) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		return fn(&repo{q: tx, tx: tx})
	})
}

// errOutsideTx guards the outbox: an event must commit with its change.
var errOutsideTx = errors.New("store: publish outside a transaction")

func (r *repo) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	if r.tx == nil {
		return errOutsideTx
	}
	return bus.Publish(ctx, r.tx, routingKey, msg)
}

// notFound turns "no row" into the domain's not-found sentinel, and passes other errors on.
func notFound(err, sentinel error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return sentinel
	}
	return err
}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func Bind(tx bus.Tx) usecase.Repo { return &repo{q: tx.Pgx(), tx: tx.Pgx()} }
