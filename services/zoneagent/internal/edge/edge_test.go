package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

func TestSlugOf(t *testing.T) {
	e := &Edge{Domain: "apps.localhost"}
	for host, want := range map[string]string{
		"blog.apps.localhost":      "blog",
		"blog.apps.localhost:8081": "blog",
		"BLOG.Apps.Localhost.":     "blog",
		"apps.localhost":           "",
		"a.b.apps.localhost":       "",
		"blog.apps.localhost.evil": "",
		"blog.example.com":         "",
		"":                         "",
	} {
		got, ok := e.slugOf(host)
		if got != want || ok != (want != "") {
			t.Errorf("slugOf(%q) = %q %v, want %q", host, got, ok, want)
		}
	}
}

// A site holds no links (a folder with one is refused at publication, so no link can reach
// files outside it), and only GET and HEAD are served.
func TestStaticStaysInsideTheSite(t *testing.T) {
	ts := newTestSites(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	withLink := t.TempDir()
	os.WriteFile(filepath.Join(withLink, "index.html"), []byte("home"), 0o644)
	os.Symlink(secret, filepath.Join(withLink, "leak.txt"))
	if err := ts.store.Publish(context.Background(), "app1", "d0", withLink); err == nil {
		t.Fatal("a folder holding a link was published")
	}
	ts.publish(t, "app1", "d1", map[string]string{"index.html": "home"})
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic}}, map[string]string{"www.example.com": "app1", "gone.example.com": "app2"})
	e := &Edge{Domain: "apps.test", Sites: ts.cache, Table: table}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/", 200, "home"},
		{"HEAD", "/index.html", 200, ""},
		{"GET", "/leak.txt", 404, "not found\n"},
		{"GET", "/../../secret.txt", 404, "not found\n"},
		{"POST", "/", 405, ""},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.Host = "site.apps.test"
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("%s %s: %d %q", tc.method, tc.path, w.Code, w.Body.String())
		}
	}
	for host, want := range map[string]int{"WWW.example.com:443": 200, "gone.example.com": 404, "other.example.com": 404} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("custom host %s: %d, want %d", host, w.Code, want)
		}
	}
	table.RemoveApp("app1")
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "site.apps.test"
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	if w.Code != http.StatusNotFound {
		t.Fatal("a removed app is still served")
	}
}

// Set replaces one app's route (and where its hostnames point) and leaves the others.
func TestTableSet(t *testing.T) {
	tb := NewTable()
	tb.Replace([]Route{{AppID: "a", Slug: "blog", DeployID: "d1"}, {AppID: "b", Slug: "shop", DeployID: "d9"}}, map[string]string{"www.blog.test": "a"})
	tb.Set(Route{AppID: "a", Slug: "blog", DeployID: "d2"})
	tb.Set(Route{AppID: "c", Slug: "new", DeployID: "d5"})
	for slug, want := range map[string]string{"blog": "d2", "shop": "d9", "new": "d5"} {
		if r, ok := tb.Lookup(slug); !ok || r.DeployID != want {
			t.Errorf("%s: %+v %v, want %s", slug, r, ok, want)
		}
	}
	if r, ok := tb.LookupHost("www.blog.test"); !ok || r.DeployID != "d2" {
		t.Errorf("hostname: %+v %v", r, ok)
	}
}

// A browser revalidating its copy of a page gets the new revision's content whenever the live
// revision changed, even when both revisions' files have the same modification time (two
// deploys within one second, or reproducible builds), and a 304 while it did not.
func TestRevalidationFollowsTheRevision(t *testing.T) {
	ts := newTestSites(t)
	same := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	for rev, body := range map[string]string{"d1": "first", "d2": "second"} {
		ts.publish(t, "app1", rev, map[string]string{"index.html": body})
	}
	table := NewTable()
	e := &Edge{Domain: "apps.test", Sites: ts.cache, Table: table}
	link := func(rev string) {
		table.Set(Route{AppID: "app1", Slug: "site", DeployID: rev, Kind: revision.KindStatic})
	}
	get := func(headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = "site.apps.test"
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		return w
	}

	link("d1")
	first := get()
	etag := first.Header().Get("ETag")
	if first.Code != 200 || first.Body.String() != "first" || etag == "" || etag == `"d1"` || first.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("first: %d %q etag %q cache %q", first.Code, first.Body.String(), etag, first.Header().Get("Cache-Control"))
	}
	if ct := first.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("first: content type %q", ct)
	}
	lastModified := same.Format(http.TimeFormat)
	if w := get("If-None-Match", etag, "If-Modified-Since", lastModified); w.Code != http.StatusNotModified {
		t.Fatalf("same revision revalidated: %d, want 304", w.Code)
	}
	link("d2")
	for _, h := range [][]string{{"If-None-Match", etag}, {"If-Modified-Since", lastModified}, {"If-None-Match", etag, "If-Modified-Since", lastModified}} {
		if w := get(h...); w.Code != 200 || w.Body.String() != "second" {
			t.Fatalf("after the switch, revalidating with %v: %d %q, want the second revision", h, w.Code, w.Body.String())
		}
	}
}
