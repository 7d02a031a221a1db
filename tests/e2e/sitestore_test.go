package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
	"tori.dev/tests/e2e/harness"
)

// siteApps lists, per app id, the revisions published in the zone's bucket.
func siteApps(t *testing.T, s *harness.Stack) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := s.ZoneSites().List(context.Background(), "sites/", func(o objectstore.Info) bool {
		parts := strings.SplitN(o.Key, "/", 4) // sites/<app>/<deploy>/…
		if len(parts) == 4 {
			if out[parts[1]] == nil {
				out[parts[1]] = map[string]bool{}
			}
			out[parts[1]][parts[2]] = true
		}
		return true
	})
	if err != nil {
		t.Fatalf("the zone's bucket: %v", err)
	}
	return out
}

// Static sites live in the zone's bucket, not on the zone's disk: a retired revision's objects
// are reclaimed, the zone agent killed and started again on an empty data folder serves every
// live site from the store (ETags and ranges kept), and a deleted app's objects go.
func TestStaticSitesLiveInTheStore(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "sitestore")
	first, second := createApp(t, s, a.Token, "static"), createApp(t, s, a.Token, "static")
	deploy := func(slug string, files ...sitePart) string {
		t.Helper()
		r := deployFiles(t, s, a.Token, slug, files...)
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		id := r.Map(t)["id"].(string)
		waitStatus(t, s, a.Token, slug, id, "live")
		return id
	}
	old := deploy(first, sitePart{"index.html", "first v1"})
	live := deploy(first, sitePart{"index.html", "first v2"}, sitePart{"docs/index.html", "docs"}, sitePart{"big.txt", strings.Repeat("0123456789", 1000)})
	deploy(second, sitePart{"index.html", "second"})
	waitEdge(t, s, first, "/", "first v2")
	waitEdge(t, s, second, "/", "second")
	harness.Eventually(t, 20*time.Second, "the retired revision's objects to be reclaimed", func() bool {
		apps := siteApps(t, s)
		if len(apps) != 2 {
			return false
		}
		for _, revs := range apps {
			if revs[old] || len(revs) != 1 {
				return false
			}
		}
		return true
	})
	var firstApp string
	for app, revs := range siteApps(t, s) {
		if revs[live] {
			firstApp = app
		}
	}

	// The zone loses its machine's folder: nothing there is needed to serve a site.
	s.Kill("zoneagent")
	if err := os.RemoveAll(s.DataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Restart("zoneagent")
	waitEdge(t, s, first, "/", "first v2")
	waitEdge(t, s, first, "/docs/", "docs")
	waitEdge(t, s, second, "/", "second")
	if _, err := os.Stat(s.DataDir + "/sites"); !os.IsNotExist(err) {
		t.Fatalf("the zone made a sites folder again: %v", err)
	}

	get := func(header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.EdgeURL(first+".apps.localhost", "/big.txt"), nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := s.EdgeClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get("Range", "bytes=10-19")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusPartialContent || string(body) != "0123456789" || etag == "" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("range: %d %q etag %q type %q", resp.StatusCode, body, etag, resp.Header.Get("Content-Type"))
	}
	resp = get("If-None-Match", etag)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d, want 304", resp.StatusCode)
	}

	// Deleting an app reclaims its site objects; the other app's stay.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + second, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 20*time.Second, "the deleted app's objects to be reclaimed", func() bool {
		apps := siteApps(t, s)
		return len(apps) == 1 && apps[firstApp][live]
	})
	waitEdge(t, s, first, "/", "first v2")
}
