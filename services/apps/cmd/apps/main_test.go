package main

import (
	"context"
	"net/http"
	"testing"

	"tori.dev/services/apps/internal/apptest"
)

func TestUsage(t *testing.T) {
	t.Setenv("GATEWAY_SIGNING_KEY", "k")
	if err := run(context.Background(), []string{"rotate"}); err == nil {
		t.Fatal("an unknown subcommand was accepted")
	}
}

// `apps rotate-keys` reads the same environment as the service and re-seals its values.
func TestRotateKeysSubcommand(t *testing.T) {
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "rotating"})
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/rotating/env", map[string]any{"key": "K", "value": "value-1"})
	before, _ := s.Store.UsedKeys(context.Background())

	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
	if err := run(context.Background(), []string{"rotate-keys"}); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Store.UsedKeys(context.Background())
	for id := range after {
		if before[id] != 0 || len(after) != 1 {
			t.Fatalf("before %v after %v", before, after)
		}
	}
	var vars []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/rotating/env", nil).JSON(t, &vars)
	if len(vars) != 1 || vars[0]["value"] != "v********" {
		t.Fatalf("after rotate-keys: %v", vars)
	}
}
