package health

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/buildinfo"
)

func TestReadyOnceEveryAwaitedPartReports(t *testing.T) {
	id := NewIdentity("unit", "test")
	app := fiber.New()
	app.Get("/healthz", id.Handler)
	app.Get("/readyz", id.ReadyHandler)
	get := func(path string) (int, map[string]any) {
		resp, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: not JSON: %s", path, b)
		}
		return resp.StatusCode, m
	}
	plans, apps := id.Await("plans"), id.Await("apps")
	if status, body := get("/readyz"); status != 503 || len(body["waiting"].([]any)) != 2 {
		t.Fatalf("before: %d %v", status, body)
	}
	if status, body := get("/healthz"); status != 200 || body["service"] != "unit" || body["version"] != "test" || body["commit"] != buildinfo.Commit {
		t.Fatalf("healthz while not ready: %d %v", status, body)
	}
	plans()
	if status, body := get("/readyz"); status != 503 || body["waiting"].([]any)[0] != "apps" {
		t.Fatalf("half way: %d %v", status, body)
	}
	apps()
	apps() // a resubscription reports again; harmless
	if status, body := get("/readyz"); status != 200 || body["ready"] != true {
		t.Fatalf("after: %d %v", status, body)
	}
}

func TestAZeroIdentityIsReady(t *testing.T) {
	var id Identity
	id.Await("anything")()
	app := fiber.New()
	app.Get("/readyz", id.ReadyHandler)
	resp, _ := app.Test(httptest.NewRequest("GET", "/readyz", nil))
	if resp.StatusCode != 200 {
		t.Fatalf("%d", resp.StatusCode)
	}
}
