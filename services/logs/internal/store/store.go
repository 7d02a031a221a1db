// Package store is the logs service's Postgres adaptor: its schema and migrations, the copy
// of apps and plans it keeps, the day-partitioned entries table and the locks that keep
// ingestion and deletion apart. Postgres errors become domain errors here.
package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the logs schema's tables; pass it to pgstore.Setup after bus.Migrations.
var Migrations = pgstore.MigrationSet{Name: "logs", FS: mustSub(migrationFiles, "migrations")}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Service is the logs service's schema and database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "logs", Role: "tori_logs", Password: password}
}

// Querier is what the store's statements need: the pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Store reads and writes the logs schema.
type Store struct {
	pool *pgxpool.Pool
	// ddl is a one-connection pool of its own for partition DDL. Ingest handlers ask for a
	// partition while their transaction holds a connection of pool; were DDL to need another
	// connection of pool, handlers holding all of them would wait on each other forever.
	ddl   *pgxpool.Pool
	parts partitionCache
}

// New wraps a pool connected as the logs role.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	cfg := pool.Config()
	cfg.MinConns = 0
	cfg.MaxConns = 1
	ddl, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: ddl pool: %w", err)
	}
	return &Store{pool: pool, ddl: ddl, parts: partitionCache{known: map[string]bool{}}}, nil
}

// Close releases the store's own connections; the caller closes the pool it passed to New.
func (s *Store) Close() { s.ddl.Close() }

// Pool is the store's pool, for transactions that span the store and the bus outbox.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
