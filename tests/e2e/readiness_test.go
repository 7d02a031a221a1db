package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// The gateway's /readyz is ready on a running stack, and once the databases service is
// stopped every route of its family answers 503 service_unavailable in the error shape.
func TestReadinessAndMissingServices(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "ready")

	r := s.Do(t, harness.Request{Method: http.MethodGet, Path: "/readyz"})
	if r.Status != http.StatusOK {
		t.Fatalf("gateway /readyz on a running stack: %d %s", r.Status, r.Body)
	}
	s.Stop("databases")
	for _, rt := range []struct{ method, path string }{
		{http.MethodGet, "/api/apps/some-app/database"},
		{http.MethodPost, "/api/apps/some-app/database"},
		{http.MethodGet, "/api/apps/some-app/database/dumps"},
		{http.MethodPost, "/api/apps/some-app/database/restores"},
	} {
		r := s.Do(t, harness.Request{Method: rt.method, Path: rt.path, Token: a.Token, Body: map[string]string{}})
		e := expectError(t, r, http.StatusServiceUnavailable, "service_unavailable")
		if e.Code != "service_unavailable" || !strings.Contains(e.Message, "databases") {
			t.Fatalf("%s %s: %s", rt.method, rt.path, r.Body)
		}
	}
	if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusOK {
		t.Fatalf("other routes: %d %s", r.Status, r.Body)
	}
}

// A body over a service's limit gets the service's own answer through the gateway, never a
// 502 (identity refuses 100 KB on POST /api/tokens from its headers, before reading it).
func TestOversizedBodyGetsTheServicesAnswer(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "oversize")
	body := `{"name":"` + strings.Repeat("x", 100<<10) + `"}`
	for i := 0; i < 20; i++ {
		r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/tokens", Token: a.Token, Body: body,
			Header: map[string]string{"Content-Type": "application/json"}})
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Fatalf("try %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "small"}); r.Status != http.StatusCreated {
		t.Fatalf("a small body after: %d %s", r.Status, r.Body)
	}
}

// A stopped service makes its own routes 503 service_unavailable (never 502) while every
// other route keeps working, and the gateway's /readyz names it.
func TestAStoppedServiceMakesOnlyItsRoutesUnavailable(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "stopped")
	slug := createApp(t, s, a.Token, "static")
	s.Stop("logs")

	e := expectError(t, s.Get(t, "/api/apps/"+slug+"/logs", a.Token), http.StatusServiceUnavailable, "service_unavailable")
	if e.Code != "service_unavailable" || !strings.Contains(e.Message, "logs") {
		t.Fatalf("stopped service's route: %+v", e)
	}
	for _, p := range []string{"/api/account", "/api/apps", "/api/apps/" + slug, "/api/apps/" + slug + "/deploys"} {
		if r := s.Get(t, p, a.Token); r.Status != http.StatusOK {
			t.Fatalf("%s with logs stopped: %d %s", p, r.Status, r.Body)
		}
	}
	harness.Eventually(t, 5*time.Second, "the gateway's /readyz names logs", func() bool {
		r := s.Do(t, harness.Request{Method: http.MethodGet, Path: "/readyz"})
		return r.Status == http.StatusServiceUnavailable && strings.Contains(string(r.Body), `"logs"`)
	})
}
