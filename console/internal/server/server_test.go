package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func testHandler(t *testing.T, files fstest.MapFS) *Handler {
	t.Helper()
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"BASE_URL": "http://api.test:8080/"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, files)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(h http.Handler, method, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestServesTheApp(t *testing.T) {
	h := testHandler(t, fstest.MapFS{
		"index.html":       {Data: []byte("<!doctype html><title>app</title>")},
		"assets/app-1a.js": {Data: []byte("console.log(1)")},
		"favicon.svg":      {Data: []byte("<svg/>")},
		".gitkeep":         {Data: nil},
	})
	cases := []struct {
		method, path string
		status       int
		body         string
		contentType  string
	}{
		{"GET", "/", 200, "<title>app</title>", "text/html"},
		{"GET", "/apps/my-site/deploys", 200, "<title>app</title>", "text/html"},
		{"GET", "/auth/verify?token=abc", 200, "<title>app</title>", "text/html"},
		{"GET", "/device?user_code=WXYZ-2345", 200, "<title>app</title>", "text/html"},
		// The link an invitation mails (identity's CONSOLE_URL/invitations/accept?token=…) and
		// the team pages are the page's own routes.
		{"GET", "/invitations/accept?token=abc", 200, "<title>app</title>", "text/html"},
		{"GET", "/teams/acme/members", 200, "<title>app</title>", "text/html"},
		{"GET", "/teams/acme/audit", 200, "<title>app</title>", "text/html"},
		{"GET", "/index.html", 200, "<title>app</title>", "text/html"},
		{"GET", "/.gitkeep", 200, "<title>app</title>", "text/html"},
		{"GET", "/assets/app-1a.js", 200, "console.log(1)", "javascript"},
		{"GET", "/favicon.svg", 200, "<svg/>", "image/svg+xml"},
		{"GET", "/assets/gone-2b.js", 404, "", ""},
		{"GET", "/config.json", 200, `{"baseUrl":"http://api.test:8080"}`, "application/json"},
		{"GET", "/readyz", 200, `{"ready":true}`, "application/json"},
		{"HEAD", "/apps", 200, "", "text/html"},
		{"POST", "/", 405, "", ""},
	}
	for _, c := range cases {
		w := get(h, c.method, c.path)
		if w.Code != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, w.Code, c.status)
			continue
		}
		if c.body != "" && !strings.Contains(w.Body.String(), c.body) {
			t.Errorf("%s %s: body %q lacks %q", c.method, c.path, w.Body.String(), c.body)
		}
		if c.contentType != "" && !strings.Contains(w.Header().Get("Content-Type"), c.contentType) {
			t.Errorf("%s %s: content type %q", c.method, c.path, w.Header().Get("Content-Type"))
		}
		csp := w.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self';", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s %s: CSP %q lacks %q", c.method, c.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "*") {
			t.Errorf("%s %s: CSP %q is not strict", c.method, c.path, csp)
		}
	}
	if cc := get(h, "GET", "/assets/app-1a.js").Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("hashed asset cache-control %q", cc)
	}
	// The invitation's code must not leave in a Referer to another site.
	if rp := get(h, "GET", "/invitations/accept?token=abc").Header().Get("Referrer-Policy"); rp != "same-origin" {
		t.Errorf("invitation page Referrer-Policy %q", rp)
	}
	if cc := get(h, "GET", "/").Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("index cache-control %q", cc)
	}
}

func TestUnbuiltSaysSo(t *testing.T) {
	h := testHandler(t, fstest.MapFS{".gitkeep": {}})
	if h.Built() {
		t.Fatal("built without index.html")
	}
	w := get(h, "GET", "/apps")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "make build") {
		t.Fatalf("unbuilt: %d %q", w.Code, w.Body.String())
	}
	var health map[string]any
	if err := json.Unmarshal(get(h, "GET", "/healthz").Body.Bytes(), &health); err != nil || health["service"] != "console" || health["built"] != false {
		t.Fatalf("healthz: %v %v", health, err)
	}
}

func TestLoadConfig(t *testing.T) {
	cases := map[string]struct {
		env     map[string]string
		addr    string
		origin  string
		wantErr string
	}{
		"defaults":          {nil, "127.0.0.1:5173", "http://127.0.0.1:8080", ""},
		"console url":       {map[string]string{"CONSOLE_URL": "http://127.0.0.1:6000"}, "127.0.0.1:6000", "http://127.0.0.1:8080", ""},
		"explicit addr":     {map[string]string{"CONSOLE_URL": "https://console.tori.dev", "CONSOLE_ADDR": ":9000"}, ":9000", "http://127.0.0.1:8080", ""},
		"https no port":     {map[string]string{"CONSOLE_URL": "https://console.tori.dev"}, "console.tori.dev:443", "http://127.0.0.1:8080", ""},
		"api with path":     {map[string]string{"BASE_URL": "https://api.tori.dev/v/"}, "127.0.0.1:5173", "https://api.tori.dev", ""},
		"bad console url":   {map[string]string{"CONSOLE_URL": "console.tori.dev"}, "", "", "CONSOLE_URL"},
		"bad base url":      {map[string]string{"BASE_URL": "ftp://x"}, "", "", "BASE_URL"},
		"http not loopback": {map[string]string{"CONSOLE_URL": "http://console.tori.dev"}, "", "", "https"},
		"redis without url": {map[string]string{"CONSOLE_SESSION_STORE": "redis"}, "", "", "REDIS_URL"},
		"unknown store":     {map[string]string{"CONSOLE_SESSION_STORE": "disk"}, "", "", "memory or redis"},
		"bad redis url":     {map[string]string{"CONSOLE_SESSION_STORE": "redis", "REDIS_URL": "http://:secret@x"}, "", "", "REDIS_URL is not"},
	}
	for name, c := range cases {
		cfg, err := LoadConfig(func(k string) string { return c.env[k] })
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one naming %s", name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if cfg.Addr != c.addr || cfg.APIOrigin != c.origin {
			t.Errorf("%s: addr %q origin %q, want %q %q", name, cfg.Addr, cfg.APIOrigin, c.addr, c.origin)
		}
	}
}
