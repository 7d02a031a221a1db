package e2e

import (
	"net/http"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

func TestCORS(t *testing.T) {
	const console, docs, admin, foreign = "http://console.test:5173", "http://docs.test:5174", "http://admin.test:5175", "http://evil.test"
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"CONSOLE_URL": console, "DOCS_URL": docs, "ADMIN_URL": admin,
		"CORS_ORIGINS":         strings.Join([]string{console, docs, admin}, ","),
		"AUTH_LIMIT_PER_15MIN": "1000",
	}})
	a := s.NewAccount(t, "cors")

	preflight := func(origin string) *harness.Response {
		return s.Do(t, harness.Request{Method: http.MethodOptions, Path: "/api/account", Header: map[string]string{
			"Origin":                         origin,
			"Access-Control-Request-Method":  "PATCH",
			"Access-Control-Request-Headers": "authorization, content-type",
		}})
	}
	for _, origin := range []string{console, docs, admin} {
		r := preflight(origin)
		if r.Status != http.StatusNoContent && r.Status != http.StatusOK {
			t.Fatalf("preflight %s: %d", origin, r.Status)
		}
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Fatalf("preflight %s: allow-origin %q", origin, got)
		}
		if r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Fatalf("preflight %s: credentials not allowed", origin)
		}
		methods := strings.ToUpper(r.Header.Get("Access-Control-Allow-Methods"))
		headers := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
		if !strings.Contains(methods, "PATCH") || !strings.Contains(headers, "authorization") {
			t.Fatalf("preflight %s: methods %q headers %q", origin, methods, headers)
		}
		got := s.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token, Header: map[string]string{"Origin": origin}})
		if got.Status != http.StatusOK || got.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Fatalf("GET from %s: %d allow-origin %q", origin, got.Status, got.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	for _, origin := range []string{foreign, console + ".evil.test", "null", strings.TrimSuffix(console, ":5173")} {
		for _, r := range []*harness.Response{
			preflight(origin),
			s.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token, Header: map[string]string{"Origin": origin}}),
		} {
			for k := range r.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-allow") {
					t.Fatalf("foreign origin %s got %s: %q", origin, k, r.Header.Get(k))
				}
			}
		}
	}
	// Never a wildcard, whatever the route.
	for _, p := range []string{"/healthz", "/api/plans", "/api/openapi.json"} {
		r := s.Do(t, harness.Request{Method: http.MethodGet, Path: p, Header: map[string]string{"Origin": console}})
		if r.Header.Get("Access-Control-Allow-Origin") == "*" {
			t.Fatalf("%s answers a wildcard origin", p)
		}
	}
}
