package store

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the deploys service's own tables; they run after bus.Migrations.
var Migrations = pgstore.EmbeddedMigrations("deploys", migrationFiles)

// Service is the deploys schema and its database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "deploys", Role: "tori_deploys", Password: password}
}

// Setup creates (when missing) and migrates the schema and returns a pool as tori_deploys;
// tests use it with an admin URL.
func Setup(ctx context.Context, adminURL, password string) (*pgxpool.Pool, error) {
	return pgstore.Setup(ctx, adminURL, Service(password), pgstore.WithMigrations(bus.Migrations, Migrations))
}

// Connect opens the service's pool as its own role (url from DEPLOYS_DATABASE_URL) and
// migrates its schema.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return pgstore.Connect(ctx, url, Service("").Schema, pgstore.WithMigrations(bus.Migrations, Migrations, callerid.Migrations))
}
