// Package store is the apps service's Postgres store. It implements the store interfaces the
// domain packages declare, translates Postgres errors into their sentinel errors, and writes
// each change's event to the bus outbox in the change's own transaction.
package store

import (
	"context"
	"embed"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the apps schema; pgstore.Setup runs it after bus.Migrations.
var Migrations = pgstore.MigrationSet{Name: "apps", FS: mustSub(migrationFiles, "migrations")}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Service names the apps schema and its role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "apps", Role: "tori_apps", Password: password}
}

// The store serves every domain package's interface.
var (
	_ accounts.Store     = (*Store)(nil)
	_ apps.Store         = (*Store)(nil)
	_ env.Store          = (*Store)(nil)
	_ env.RotationStore  = (*Store)(nil)
	_ domains.Store      = (*Store)(nil)
	_ domains.CheckStore = (*Store)(nil)
)

// Publisher writes an event in tx; bus.Publish in production.
type Publisher func(ctx context.Context, tx pgx.Tx, routingKey string, msg proto.Message) error

// Store is the Postgres store.
type Store struct {
	pool    *pgxpool.Pool
	publish Publisher
}

// New returns a store over pool publishing through bus.Publish.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool, publish: bus.Publish} }

// Pool is the store's pool, for the bus's consumers and relay.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
