package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

func TestConnectRefusesAPrivilegedRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	if _, err := pgstore.Connect(ctx, admin, "alpha", pgstore.WithMigrations(migrations("alpha_things"))); !errors.Is(err, pgstore.ErrSuperuser) {
		t.Fatalf("Connect as the superuser = %v, want ErrSuperuser", err)
	}

	// Its own role connects and migrates its own schema.
	own := testinfra.ServiceRoleURL(t, admin, "alpha")
	pool, err := pgstore.Connect(ctx, own, "alpha", pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var secret string
	if err := pool.QueryRow(ctx, `SELECT secret FROM alpha_things`).Scan(&secret); err != nil || secret != "only mine" {
		t.Fatalf("migrated as its own role: %q, %v", secret, err)
	}
}
