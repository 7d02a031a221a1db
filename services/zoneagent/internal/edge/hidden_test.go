package edge

import (
	"net/http/httptest"
	"testing"

	"tori.dev/services/zoneagent/internal/revision"
)

func TestHiddenPaths(t *testing.T) {
	for name, want := range map[string]bool{
		"":                              false,
		"index.html":                    false,
		"assets/app.js":                 false,
		"a.b/c..d/file.tar.gz":          false,
		"..foo":                         true,
		".env":                          true,
		".env.production":               true,
		".git":                          true,
		".git/config":                   true,
		"blog/.htpasswd":                true,
		"blog/.git/HEAD":                true,
		".well-known":                   false,
		".well-known/security.txt":      false,
		".well-known/acme-challenge/x1": false,
		".well-known/.secret":           true,
		"blog/.well-known/x":            true,
	} {
		if got := hidden(name); got != want {
			t.Errorf("hidden(%q) = %v, want %v", name, got, want)
		}
	}
}

// The edge answers a dotfile of a static site as it answers a missing file, however the path
// is spelt: percent-encoded, through `..`, with a doubled slash. The rule reads the cleaned
// path, so a path that cleans to a visible file is still served.
func TestStaticDotfilesAreNotServed(t *testing.T) {
	ts := newTestSites(t)
	ts.publish(t, "app1", "d1", map[string]string{
		"index.html":               "home",
		"a/index.html":             "a home",
		".env":                     "SECRET=1",
		".git/config":              "[core]",
		".git/index.html":          "git index",
		"a/.htpasswd":              "user:hash",
		".well-known/security.txt": "Contact: mailto:sec@example.com",
		".well-known/.hidden":      "no",
		".well-known/index.html":   "wk index",
	})
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic}}, nil)
	e := &Edge{Domain: "apps.test", Sites: ts.cache, Table: table}
	for _, tc := range []struct {
		target string
		status int
		body   string
	}{
		{"/", 200, "home"},
		{"/.env", 404, "not found\n"},
		{"/%2Eenv", 404, "not found\n"},
		{"/%2eenv", 404, "not found\n"},
		{"//.env", 404, "not found\n"},
		{"/a/../.env", 404, "not found\n"},
		{"/a/%2e%2e/.env", 404, "not found\n"},
		{"/a/%2e%2e/", 200, "home"},
		{"/a/%2E%2E/a/", 200, "a home"},
		{"/.git/config", 404, "not found\n"},
		{"/.git/", 404, "not found\n"},
		{"/.git", 404, "not found\n"},
		{"/%2Egit/config", 404, "not found\n"},
		{"/.git%2Fconfig", 404, "not found\n"},
		{"/a/.htpasswd", 404, "not found\n"},
		{"/a/%2ehtpasswd", 404, "not found\n"},
		{"/.well-known/security.txt", 200, "Contact: mailto:sec@example.com"},
		{"/%2Ewell-known/security.txt", 200, "Contact: mailto:sec@example.com"},
		{"/.well-known/", 200, "wk index"},
		{"/.well-known/.hidden", 404, "not found\n"},
		{"/.well-known/../.env", 404, "not found\n"},
		{"/.well-known/%2e%2e/.git/config", 404, "not found\n"},
		{"/missing.txt", 404, "not found\n"},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			req := httptest.NewRequest(method, tc.target, nil)
			req.Host = "site.apps.test"
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			// A HEAD is judged by its status: the server drops whatever body a handler writes.
			if w.Code != tc.status || (method == "GET" && w.Body.String() != tc.body) {
				t.Errorf("%s %s: %d %q, want %d %q", method, tc.target, w.Code, w.Body.String(), tc.status, tc.body)
			}
		}
	}
}
