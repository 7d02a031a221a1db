package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/identity/internal/store"
)

// A migration applied once and edited afterwards stops the service at start, naming the file:
// the schema and the code would otherwise disagree without anyone noticing. The edit is made
// where Postgres keeps the applied text's checksum, which is what an edited file looks like
// to the next start.
func TestAChangedMigrationStopsTheService(t *testing.T) {
	t.Parallel()
	env := testinfra.ServiceEnv(t, "identity")
	env["CONSOLE_URL"] = console
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	pool, err := pgstore.Connect(ctx, env["IDENTITY_DATABASE_URL"], "identity", pgstore.WithMigrations(bus.Migrations, store.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `UPDATE schema_migrations SET checksum = repeat('0', 64) WHERE set_name = 'identity' AND name = '001_identity.sql'`)
	pool.Close()
	if err != nil {
		t.Fatal(err)
	}

	logs := &testinfra.LogBuffer{}
	err = serve(ctx, env, logs)
	if !errors.Is(err, pgstore.ErrMigrationChanged) || !strings.Contains(err.Error(), "identity/001_identity.sql") {
		t.Fatalf("serve() = %v, want ErrMigrationChanged naming identity/001_identity.sql", err)
	}
}
