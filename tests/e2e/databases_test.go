package e2e

import (
	"net/http"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// The managed database's routes through the gateway: one per service app, created
// provisioning, its owner's alone, and 404 wherever there is no app of the caller's or no
// database.
func TestDatabaseRoutesThroughTheGateway(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "db")
	other := s.NewAccount(t, "db-other")
	svc := createApp(t, s, a.Token, "service")
	static := createApp(t, s, a.Token, "static")
	bare := createApp(t, s, a.Token, "service")
	path := func(slug string) string { return "/api/apps/" + slug + "/database" }

	r := post(s, t, path(svc), a.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.Map(t)
	expectKeys(t, "database", created, "id", "appId", "createdAt", "message", "status")
	if created["status"] != "provisioning" || created["message"] != nil {
		t.Fatalf("create: %s", r.Body)
	}
	app := s.Get(t, "/api/apps/"+svc, a.Token).Map(t)
	if created["appId"] != app["id"] {
		t.Fatalf("appId %v, app %v", created["appId"], app["id"])
	}
	// The zone makes it on its own cluster and says so.
	harness.Eventually(t, 30*time.Second, "the database ready", func() bool {
		got := s.Get(t, path(svc), a.Token)
		if got.Status != http.StatusOK || got.Map(t)["id"] != created["id"] {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		st := got.Map(t)["status"]
		if st != "provisioning" && st != "ready" {
			t.Fatalf("status %v: %s", st, got.Body)
		}
		return st == "ready"
	})
	// Then the apps service writes DATABASE_URL, masked like every value.
	harness.Eventually(t, 30*time.Second, "DATABASE_URL in the app's environment", func() bool {
		v, ok := envValue(t, s, a.Token, svc, "DATABASE_URL")
		if ok && v != "pos********" {
			t.Fatalf("DATABASE_URL shown as %q", v)
		}
		return ok
	})

	expectError(t, post(s, t, path(svc), a.Token, nil), http.StatusConflict, "database_exists")
	expectError(t, post(s, t, path(static), a.Token, nil), http.StatusBadRequest, "service_only")
	for _, tc := range []struct {
		name, method, slug, token string
	}{
		{"unknown app", http.MethodGet, "no-such-app", a.Token},
		{"unknown app, create", http.MethodPost, "no-such-app", a.Token},
		{"another account's app", http.MethodGet, svc, other.Token},
		{"another account's app, create", http.MethodPost, svc, other.Token},
		{"another account's app, delete", http.MethodDelete, svc, other.Token},
		{"an app without one", http.MethodGet, bare, a.Token},
		{"an app without one, delete", http.MethodDelete, bare, a.Token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectError(t, s.Do(t, harness.Request{Method: tc.method, Path: path(tc.slug), Token: tc.token}), http.StatusNotFound, "not found")
		})
	}

	del := s.Do(t, harness.Request{Method: http.MethodDelete, Path: path(svc), Token: a.Token})
	if del.Status != http.StatusAccepted || del.Map(t)["status"] != "deleting" {
		t.Fatalf("delete: %d %s", del.Status, del.Body)
	}
	// The record goes once the zone confirms the database gone; then a new one may be made.
	harness.Eventually(t, 30*time.Second, "the database gone", func() bool {
		return s.Get(t, path(svc), a.Token).Status == http.StatusNotFound
	})
	harness.Eventually(t, 30*time.Second, "DATABASE_URL gone with it", func() bool {
		_, ok := envValue(t, s, a.Token, svc, "DATABASE_URL")
		return !ok
	})
	if r := post(s, t, path(svc), a.Token, nil); r.Status != http.StatusAccepted {
		t.Fatalf("create after the delete: %d %s", r.Status, r.Body)
	}

	// A deleted app's database is 404 at once.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + svc, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete app: %d %s", r.Status, r.Body)
	}
	expectError(t, s.Get(t, path(svc), a.Token), http.StatusNotFound, "not found")
}

// envValue is the masked value of the app's variable key, if it is set.
func envValue(t *testing.T, s *harness.Stack, token, slug, key string) (string, bool) {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/env", token)
	if r.Status != http.StatusOK {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	var vars []map[string]any
	r.JSON(t, &vars)
	for _, v := range vars {
		if v["key"] == key {
			return v["value"].(string), true
		}
	}
	return "", false
}
