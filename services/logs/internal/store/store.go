// Package store is the logs service's Postgres adaptor: its schema and migrations, the copy
// of apps and plans it keeps, the day-partitioned entries table and the locks that keep
// ingestion and deletion apart. It implements the ports of internal/usecase; Postgres errors
// become domain errors here.
package store

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/usecase"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the logs schema's tables; pass it to pgstore.Setup after bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("logs", migrationFiles)

// Service is the logs service's schema and database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "logs", Role: "tori_logs", Password: password}
}

// PoolSettings are the settings the logs role's sessions run with; pass them to the pool the
// store is given (pgstore.Open, Setup, service.OpenServiceDatabase).
//
// plan_cache_mode: every read of the day-partitioned tables is planned for its own window.
// A generic plan, which Postgres picks for a prepared statement after five runs, names every
// partition and locks each one at every run, however narrow the window: a read of today then
// queued behind the ACCESS EXCLUSIVE lock that dropping a day past retention takes on that
// day's table, for as long as the drop waited for older readers. Measured: a page read of
// today during a one-second lock on the oldest day took 818 ms on the generic plan, 1.8 ms
// planned for its window (whose pruning locks only that window's days); planning each run
// costs ~0.1 ms. The scale bench's logs p99 during a drop is the figure (docs/performance.md).
var PoolSettings = []pgstore.Option{pgstore.WithSessionSetting("plan_cache_mode", "force_custom_plan")}

// querier is what the store's statements need: the pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// queries are the statements that run the same on the pool and in a transaction.
type queries struct {
	q     querier
	parts *partitionCache
}

// Store reads and writes the logs schema.
type Store struct {
	queries
	pool *pgxpool.Pool
	// ddl is a one-connection pool of its own for partition DDL. Ingest handlers ask for a
	// partition while their transaction holds a connection of pool; were DDL to need another
	// connection of pool, handlers holding all of them would wait on each other forever.
	ddl *pgxpool.Pool
}

var _ usecase.Store = (*Store)(nil)

// The reader takes the one-trip path only with a store that can check its guess.
var _ usecase.CheckedEntryReader = (*Store)(nil)

// New wraps a pool connected as the logs role.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	cfg := pool.Config()
	cfg.MinConns = 0
	cfg.MaxConns = 1
	ddl, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: ddl pool: %w", err)
	}
	parts := &partitionCache{known: map[string]bool{}}
	return &Store{queries: queries{q: pool, parts: parts}, pool: pool, ddl: ddl}, nil
}

// Close releases the store's own connections; the caller closes the pool it passed to New.
func (s *Store) Close() { s.ddl.Close() }

// Tx is the store inside one transaction: the bus consumer's or one InTx opens.
type Tx struct {
	queries
	tx pgx.Tx
}

var _ usecase.Tx = Tx{}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func (s *Store) Bind(tx bus.Tx) usecase.Tx { return s.bind(tx.Pgx()) }

func (s *Store) bind(tx pgx.Tx) Tx { return Tx{queries: queries{q: tx, parts: s.parts}, tx: tx} }

// InTx implements usecase.Store.
func (s *Store) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(s.bind(tx)) })
}

// Publish implements usecase.Tx: the event goes to the outbox in this transaction.
func (t Tx) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return bus.Publish(ctx, t.tx, routingKey, msg)
}
