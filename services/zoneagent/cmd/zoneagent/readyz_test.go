package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/health"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/config"
)

func readyBody(t *testing.T, res *http.Response) map[string]any {
	t.Helper()
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	body := map[string]any{}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("/readyz body %q: %v", b, err)
	}
	return body
}

// /readyz adds the sandbox's state to a ready answer and stays 200 either way (the zone
// serves static sites without a sandbox); before the zone is ready it is the plain 503.
func TestReadyzReportsTheSandbox(t *testing.T) {
	for _, tc := range []struct {
		name, unavailable, want string
		awaiting                bool
		status                  int
	}{
		{name: "sandbox ok", want: "ok", status: 200},
		{name: "sandbox unavailable", unavailable: "bubblewrap not found (ZONE_BWRAP=bwrap)", want: "unavailable: bubblewrap not found (ZONE_BWRAP=bwrap)", status: 200},
		{name: "not ready yet", unavailable: "no tool", awaiting: true, status: 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := health.NewIdentity("zoneagent", "test")
			if tc.awaiting {
				id.Await("zone.deploy.requested")
			}
			app := fiber.New()
			app.Get("/readyz", readyz(id, tc.unavailable, config.Posture{AppsDomain: "ok", Certificates: "ok"}))
			res, err := app.Test(httptest.NewRequest("GET", "/readyz", nil))
			if err != nil {
				t.Fatal(err)
			}
			body := readyBody(t, res)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %v", res.StatusCode, tc.status, body)
			}
			if tc.awaiting {
				if body["code"] != "not_ready" || body["sandbox"] != nil {
					t.Errorf("not ready: %v", body)
				}
				return
			}
			if body["sandbox"] != tc.want || body["ready"] != true {
				t.Errorf("body %v, want sandbox %q beside ready", body, tc.want)
			}
		})
	}
}

// The whole agent on a host without bubblewrap: it says so in one line at start, /readyz is
// 200 with "sandbox": "unavailable: <why>"; with the tools it is "ok".
func TestZoneReadyzWithoutBubblewrap(t *testing.T) {
	z := testinfra.Service{
		Name: "zoneagent", Serve: serve, AddrVar: "ZONEAGENT_ADDR", ReadyPath: "/readyz",
		Env: withZoneStore(t, map[string]string{
			"EDGE_TLS_ADDR": "off", // the edge's HTTPS is edge_tls_test.go's
			"EDGE_ADDR":     testinfra.FreeAddr(t), "ZONE_EDGE_HEALTH_ADDR": testinfra.FreeAddr(t),
			"ZONE_APPS_DIR": t.TempDir(),
			"APPS_DOMAIN":   "apps.test",
			"ZONE_BWRAP":    "/nonexistent/bwrap",
		}),
	}.Start(t)
	res, err := http.Get(z.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body := readyBody(t, res)
	why, _ := body["sandbox"].(string)
	if res.StatusCode != 200 || !strings.HasPrefix(why, "unavailable: bubblewrap not found (ZONE_BWRAP=/nonexistent/bwrap)") {
		t.Fatalf("/readyz %d %v", res.StatusCode, body)
	}
	if logs := z.Logs.String(); !strings.Contains(logs, "sandbox unavailable: source deploys will fail with sandbox_unavailable; static sites are served: bubblewrap not found") {
		t.Errorf("no start line saying the sandbox is unavailable:\n%s", logs)
	}
	// apps.test is on no list: the apps share their cookies, and both places say so.
	const shared = "apps.test is not a public suffix: one app can set cookies every other app receives"
	if d, _ := body["appsDomain"].(string); !strings.HasPrefix(d, shared) || body["certificates"] != "ok" {
		t.Errorf("/readyz appsDomain %q, certificates %v", d, body["certificates"])
	}
	if logs := z.Logs.String(); !strings.Contains(logs, `"msg":"`+shared) || !strings.Contains(logs, `"apps_domain":"`+shared) {
		t.Errorf("no start line saying the apps domain is not a public suffix:\n%s", logs)
	}

	ok := startZone(t)
	res, err = http.Get(ok.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if body := readyBody(t, res); res.StatusCode != 200 || body["sandbox"] != "ok" {
		t.Fatalf("/readyz with the tools: %d %v", res.StatusCode, body)
	}
}
