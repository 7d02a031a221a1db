package ratelimit

import (
	"embed"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the counters table this package once kept in the gateway's schema, and its
// removal: applied migrations stay, so a database that ran them still matches.
var Migrations = pgstore.EmbeddedMigrations("gateway", migrationFiles)
