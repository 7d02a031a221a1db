package store

import (
	"embed"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are billing's own tables. They run after bus.Migrations, whose outbox the
// service publishes through.
var Migrations = pgstore.EmbeddedMigrations("billing", migrationFiles)

// Service is billing's schema and database role.
func Service(password string) pgstore.Service {
	return pgstore.Service{Schema: "billing", Role: "tori_billing", Password: password}
}
