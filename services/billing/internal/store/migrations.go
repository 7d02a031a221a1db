package store

import (
	"context"
	"embed"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are billing's own tables. They run after bus.Migrations, whose outbox the
// service publishes through.
var Migrations = pgstore.MigrationSet{Name: "billing", FS: mustSub(migrationFiles, "migrations")}

// Service is billing's schema and database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "billing", Role: "tori_billing", Password: password}
}

// Setup prepares billing's schema in the database adminURL names (creating the database,
// role and schema when missing), migrates it, and returns a pool connected as billing's role.
func Setup(ctx context.Context, adminURL, password string) (*pgxpool.Pool, error) {
	return pgstore.Setup(ctx, adminURL, Service(password), pgstore.WithMigrations(bus.Migrations, Migrations))
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
