package bus

import (
	"embed"
	"io/fs"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the outbox and processed_messages tables. Every service that publishes or
// consumes passes it to pgstore.Setup before its own migrations.
var Migrations = pgstore.MigrationSet{Name: "bus", FS: mustSub(migrationFiles, "migrations")}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
