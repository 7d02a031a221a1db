package testinfra

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
)

// ServiceRoleURL makes, in the database adminURL names, a login role of this test's own that
// owns schema (with a random password, as bin/bootstrap would), and returns the URL that
// connects as it. The role goes when the test ends, after the database it owns things in.
func ServiceRoleURL(t testing.TB, adminURL, schema string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc := pgstore.Service{Schema: schema, Role: "t_" + randomHex(6) + "_role", Password: randomHex(16)}
	if err := pgstore.EnsureService(ctx, adminURL, svc); err != nil {
		t.Fatalf("testinfra: role for %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, withDatabase(adminURL, "postgres"))
		if err != nil {
			t.Errorf("testinfra: drop role %s: %v", svc.Role, err)
			return
		}
		defer c.Close(ctx)
		// The role owns the test's schema: its database goes first (whatever else the test
		// still had cleaning up after it finds the database gone, as it would have anyway).
		u, _ := pgx.ParseConfig(adminURL)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{u.Database}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("testinfra: drop role %s: %v", svc.Role, err)
			return
		}
		if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{svc.Role}.Sanitize()); err != nil {
			t.Errorf("testinfra: drop role %s: %v", svc.Role, err)
		}
	})
	url, err := pgstore.ServiceURL(adminURL, svc)
	if err != nil {
		t.Fatal(err)
	}
	return url
}
