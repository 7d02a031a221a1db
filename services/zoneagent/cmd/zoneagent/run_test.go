package main

import (
	"io"
	"maps"
	"net/http"
	"testing"

	"tori.dev/pkg/testinfra"
)

// startZone runs the whole agent in-process: its own schema, bus namespace, data and apps
// folders, health server and edge.
func startZone(t *testing.T) *testinfra.Running {
	t.Helper()
	return testinfra.Service{
		Name: "zoneagent", Serve: serve, AddrVar: "ZONEAGENT_ADDR", ReadyPath: "/readyz",
		Env: withZoneStore(t, map[string]string{
			"EDGE_ADDR":            testinfra.FreeAddr(t),
			"EDGE_TLS_ADDR":        testinfra.FreeAddr(t),
			"ZONE_TLS_STORAGE_KEY": testTLSKey,
			"ZONE_APPS_DIR":        t.TempDir(),
			"APPS_DOMAIN":          "apps.test",
		}),
	}.Start(t)
}

func get(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The zone comes up ready (both consumers bound), answers /healthz on its health address,
// and its edge answers an app it does not serve with the plain 404; it stops cleanly when
// the test ends.
func TestZoneServesHealthAndEdge(t *testing.T) {
	z := startZone(t)
	if status, _ := get(t, z.URL+"/healthz", ""); status != http.StatusOK {
		t.Fatalf("/healthz: %d", status)
	}
	edge := "http://" + z.Env["EDGE_ADDR"]
	for _, host := range []string{"nothing.apps.test", "example.com"} {
		if status, body := get(t, edge+"/", host); status != http.StatusNotFound || body != "not found\n" {
			t.Errorf("edge for %s: %d %q", host, status, body)
		}
	}
}

// withZoneStore adds to env the zone's own account and bucket on an S3 server of the test's
// own, as bin/bootstrap writes them to the zone agent's file: the zone keeps its sites there.
func withZoneStore(t testing.TB, env map[string]string) map[string]string {
	t.Helper()
	maps.Copy(env, testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "local"))
	return env
}
