package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// Handed the admin URL instead of its own role, the service refuses to start and says why,
// before it has touched its schema.
func TestStartedWithASuperuserRefusesToStart(t *testing.T) {
	t.Parallel()
	env := testinfra.ServiceEnv(t, "identity")
	env["CONSOLE_URL"] = console
	env["IDENTITY_DATABASE_URL"] = env["DATABASE_URL"] // the test server's superuser
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	err := serve(ctx, env, &testinfra.LogBuffer{})
	if !errors.Is(err, pgstore.ErrSuperuser) || !strings.Contains(err.Error(), "bin/bootstrap") {
		t.Fatalf("serve() = %v, want ErrSuperuser pointing at bin/bootstrap", err)
	}
}
