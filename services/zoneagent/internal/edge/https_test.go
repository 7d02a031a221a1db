package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"tori.dev/services/zoneagent/internal/revision"
)

func httpsTestEdge() *Edge {
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic}}, map[string]string{"www.example.com": "app1"})
	return &Edge{Domain: "apps.test", Table: table}
}

func TestServesOnlyLiveHosts(t *testing.T) {
	e := httpsTestEdge()
	for host, want := range map[string]bool{
		"site.apps.test":       true,
		"SITE.apps.test.":      true,
		"www.example.com":      true,
		"other.apps.test":      false,
		"example.com":          false,
		"apps.test":            false,
		"a.site.apps.test":     false,
		"www.example.com.evil": false,
	} {
		if got := e.Serves(host); got != want {
			t.Errorf("Serves(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestRedirectToHTTPS(t *testing.T) {
	e := httpsTestEdge()
	answered := false
	h := Redirect{Edge: e, HTTPSPort: 8443, Challenge: func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/.well-known/acme-challenge/tok" {
			answered = true
			w.Write([]byte("keyauth"))
			return true
		}
		return false
	}}
	for _, tc := range []struct {
		host, target string
		status       int
		location     string
	}{
		{"site.apps.test:8081", "/a%20b/c?x=1", 308, "https://site.apps.test:8443/a%20b/c?x=1"},
		{"www.example.com", "/", 308, "https://www.example.com:8443/"},
		{"unknown.apps.test", "/", 404, ""},
		{"site.apps.test", "/.well-known/acme-challenge/tok", 200, ""},
		// A challenge path nobody is solving goes to the edge as plain HTTP (no redirect).
		{"site.apps.test", "/.well-known/acme-challenge/other", 404, ""},
	} {
		req := httptest.NewRequest("GET", tc.target, nil)
		req.Host = tc.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.status || w.Header().Get("Location") != tc.location {
			t.Errorf("%s%s: %d %q, want %d %q", tc.host, tc.target, w.Code, w.Header().Get("Location"), tc.status, tc.location)
		}
	}
	if !answered {
		t.Error("the HTTP-01 challenge was not answered")
	}
	h.HTTPSPort = 443
	req := httptest.NewRequest("GET", "/x", nil)
	req.Host = "site.apps.test"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if got := w.Header().Get("Location"); got != "https://site.apps.test/x" {
		t.Errorf("port 443: Location %q", got)
	}
}

func TestHSTSOnlyForAppHostnames(t *testing.T) {
	h := Secure{Edge: httpsTestEdge()}
	for host, want := range map[string]string{"site.apps.test": HSTS, "www.example.com": "", "nope.apps.test": HSTS} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got := w.Header().Get("Strict-Transport-Security"); got != want {
			t.Errorf("%s: HSTS %q, want %q", host, got, want)
		}
	}
}
