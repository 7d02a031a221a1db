package cors

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

const (
	console = "http://127.0.0.1:5173"
	foreign = "https://evil.example"
)

func newApp() *fiber.App {
	app := fiber.New()
	app.Use(New([]string{console, "http://127.0.0.1:5174", "*"}).Handler)
	app.All("/*", func(c *fiber.Ctx) error {
		// A service that sends its own CORS headers must not decide anything.
		c.Set("Access-Control-Allow-Origin", "*")
		return c.SendString("ok")
	})
	return app
}

func do(t *testing.T, app *fiber.App, method, origin string, extra map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, "/api/apps", nil)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func accessControl(resp *http.Response) map[string]string {
	out := map[string]string{}
	for k, v := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			out[k] = strings.Join(v, ",")
		}
	}
	return out
}

func TestPreflightFromAllowedOrigin(t *testing.T) {
	resp := do(t, newApp(), "OPTIONS", console, map[string]string{
		"Access-Control-Request-Method":  "DELETE",
		"Access-Control-Request-Headers": "authorization, content-type",
	})
	if resp.StatusCode != 204 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	h := resp.Header
	if h.Get("Access-Control-Allow-Origin") != console {
		t.Fatalf("allow origin %q", h.Get("Access-Control-Allow-Origin"))
	}
	if h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatal("credentials not allowed")
	}
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) {
			t.Fatalf("methods %q lack %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, hd := range []string{"Authorization", "Content-Type", "Idempotency-Key"} {
		if !strings.Contains(h.Get("Access-Control-Allow-Headers"), hd) {
			t.Fatalf("headers %q lack %s", h.Get("Access-Control-Allow-Headers"), hd)
		}
	}
	if h.Get("Access-Control-Max-Age") == "" {
		t.Fatal("no max age")
	}
	if !strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("Vary %q", h.Get("Vary"))
	}
}

func TestPreflightFromForeignOriginHasNoAllowHeaders(t *testing.T) {
	resp := do(t, newApp(), "OPTIONS", foreign, map[string]string{"Access-Control-Request-Method": "GET"})
	if resp.StatusCode != 204 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ac := accessControl(resp); len(ac) != 0 {
		t.Fatalf("foreign origin got %v", ac)
	}
}

func TestRequestFromAllowedOrigin(t *testing.T) {
	resp := do(t, newApp(), "GET", console, nil)
	h := resp.Header
	if got := h.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != console {
		t.Fatalf("allow origin %v: the service's wildcard must be replaced by the exact origin", got)
	}
	if h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatal("credentials not allowed")
	}
	if !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Fatal("Retry-After not exposed")
	}
	if !strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("Vary %q", h.Get("Vary"))
	}
}

func TestRequestFromForeignOriginOrNoneHasNoAllowHeaders(t *testing.T) {
	for _, origin := range []string{foreign, "", "null", console + ".evil.example", "http://127.0.0.1:5173/"} {
		resp := do(t, newApp(), "GET", origin, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%q: status %d", origin, resp.StatusCode)
		}
		if ac := accessControl(resp); len(ac) != 0 {
			t.Fatalf("%q got %v", origin, ac)
		}
	}
}

// A wildcard in the configuration must not become a wildcard with credentials, nor let any
// origin in.
func TestWildcardIsNeverAllowed(t *testing.T) {
	p := New([]string{"*"})
	if p.Allowed("*") || p.Allowed(foreign) {
		t.Fatal("wildcard allowed")
	}
	resp := do(t, newApp(), "GET", "*", nil)
	if ac := accessControl(resp); len(ac) != 0 {
		t.Fatalf("wildcard origin got %v", ac)
	}
}
