package bus

import (
	"embed"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the outbox and processed_messages tables. Every service that publishes or
// consumes runs it before its own migrations.
var Migrations = pgstore.EmbeddedMigrations("bus", migrationFiles)
