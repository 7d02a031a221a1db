package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tori.dev/contract/names"
	"tori.dev/services/zoneagent/internal/revision"
)

// recordingServices answers every proxied request 200 and keeps the route it was given.
type recordingServices struct{ routes []Route }

func (s *recordingServices) ServeHTTP(w http.ResponseWriter, _ *http.Request, route Route) {
	s.routes = append(s.routes, route)
	w.Write([]byte("service " + route.DeployID))
}

func previewEdge(t *testing.T) (*Edge, *recordingServices) {
	t.Helper()
	ts := newTestSites(t)
	ts.publish(t, "app1", "live1", map[string]string{"index.html": "live"})
	ts.publish(t, "app1", "prev1", map[string]string{"index.html": "preview"})
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "shop", DeployID: "live1", Kind: revision.KindStatic}}, nil)
	table.ReplacePreviews([]Preview{
		{ID: "abc123", AppID: "app1", Slug: "shop", DeployID: "prev1", Kind: revision.KindStatic},
		{ID: "svc001", AppID: "app1", Slug: "shop", DeployID: "svc1", Kind: revision.KindSource},
		{ID: "old999", AppID: "app1", Slug: "shop", Removed: true},
		{ID: "nos111", AppID: "app1", Removed: true},
		{ID: "pay001", AppID: "app2", Slug: "held", DeployID: "held1", Kind: revision.KindSource},
	})
	svc := &recordingServices{}
	return &Edge{Domain: "apps.test", PreviewsDomain: "preview.apps.test", Sites: ts.cache, Table: table, Services: svc}, svc
}

func get(h http.Handler, host string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = host
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// A preview's host serves the preview's revision while the app's own host keeps serving
// its live one; a label whose slug part is not the preview's, an unknown id or a malformed
// label is 404; a removed preview is 410 with a short body; every answer for a preview's
// host says noindex, and none of the app's own does.
func TestPreviewHostRouting(t *testing.T) {
	e, svc := previewEdge(t)
	e.Table.Pause(map[string]time.Time{"app2": time.Now().Add(-time.Minute)})
	for _, tc := range []struct {
		host    string
		status  int
		body    string
		noindex bool
	}{
		{"shop.apps.test", 200, "live", false},
		{"shop-abc123.preview.apps.test", 200, "preview", true},
		{"SHOP-ABC123.Preview.Apps.Test.:8443", 200, "preview", true},
		{"shop-svc001.preview.apps.test", 200, "service svc1", true},
		{"other-abc123.preview.apps.test", 404, "not found\n", true},
		{"abc123.preview.apps.test", 404, "not found\n", true},
		{"sho-abc123.preview.apps.test", 404, "not found\n", true},
		{"shop-zzz999.preview.apps.test", 404, "not found\n", true},
		{"shop-old999.preview.apps.test", 410, goneBody, true},
		{"shop-nos111.preview.apps.test", 410, goneBody, true},
		{"nos111.preview.apps.test", 410, goneBody, true},
		{"held-pay001.preview.apps.test", 503, "", true},
		{"a.shop-abc123.preview.apps.test", 404, "not found\n", false},
		{"shop-abc12.preview.apps.test", 404, "not found\n", false},
	} {
		w := get(e, tc.host)
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.host, w.Code, w.Body.String(), tc.status, tc.body)
		}
		if got := w.Header().Get("X-Robots-Tag") == "noindex"; got != tc.noindex {
			t.Errorf("%s: X-Robots-Tag %q, noindex wanted %v", tc.host, w.Header().Get("X-Robots-Tag"), tc.noindex)
		}
	}
	if len(svc.routes) != 1 || svc.routes[0].PreviewID != "svc001" || svc.routes[0].DeployID != "svc1" {
		t.Fatalf("the proxy was given %+v, want the preview's route", svc.routes)
	}
}

// HTTPS: a live preview's host is served (a certificate may be ordered for it), a removed or
// mismatched one is not; no HSTS on a preview's host; the plain listener redirects a live
// preview and answers a removed one 410 itself.
func TestPreviewHostOverHTTPS(t *testing.T) {
	e, _ := previewEdge(t)
	for host, want := range map[string]bool{
		"shop-abc123.preview.apps.test": true, "shop-old999.preview.apps.test": false,
		"other-abc123.preview.apps.test": false, "shop-zzz999.preview.apps.test": false,
	} {
		if got := e.Serves(host); got != want {
			t.Errorf("Serves(%s) = %v, want %v", host, got, want)
		}
	}
	if app, custom, ok := e.Owner("shop-abc123.preview.apps.test"); app != "app1" || custom || !ok {
		t.Errorf("Owner of a preview host: %q %v %v", app, custom, ok)
	}
	w := get(Secure{Edge: e}, "shop-abc123.preview.apps.test")
	if w.Code != 200 || w.Header().Get("Strict-Transport-Security") != "" || w.Header().Get("X-Robots-Tag") != "noindex" {
		t.Errorf("TLS preview answer: %d HSTS %q robots %q", w.Code, w.Header().Get("Strict-Transport-Security"), w.Header().Get("X-Robots-Tag"))
	}
	if w := get(Secure{Edge: e}, "shop.apps.test"); w.Header().Get("Strict-Transport-Security") == "" {
		t.Error("the app's own host lost its HSTS")
	}
	plain := Redirect{Edge: e, HTTPSPort: 443}
	if w := get(plain, "shop-abc123.preview.apps.test"); w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != "https://shop-abc123.preview.apps.test/" {
		t.Errorf("plain live preview: %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := get(plain, "shop-old999.preview.apps.test"); w.Code != http.StatusGone || w.Header().Get("X-Robots-Tag") != "noindex" {
		t.Errorf("plain removed preview: %d", w.Code)
	}
}

// A removal (one preview, or its whole app) turns a preview into a tombstone at once, in the
// runtime's table and in its edge's copy fed through Follow; a long slug is cut in the label
// and still names the preview.
func TestPreviewTombstonesFollowTheFeed(t *testing.T) {
	e, _ := previewEdge(t)
	copyOf := NewTable()
	e.Table.Follow(func(c Change) {
		if err := copyOf.Apply(c); err != nil {
			t.Fatal(err)
		}
	})
	follower := &Edge{Domain: e.Domain, PreviewsDomain: e.PreviewsDomain, Sites: e.Sites, Table: copyOf, Services: e.Services}
	if w := get(follower, "shop-abc123.preview.apps.test"); w.Code != 200 {
		t.Fatalf("the follower does not serve the preview: %d", w.Code)
	}
	e.Table.SetPreview(Preview{ID: "abc123", AppID: "app1", Slug: "shop", Removed: true})
	for _, h := range []*Edge{e, follower} {
		if w := get(h, "shop-abc123.preview.apps.test"); w.Code != http.StatusGone {
			t.Errorf("removed preview: %d, want 410", w.Code)
		}
		if w := get(h, "shop.apps.test"); w.Code != 200 || w.Body.String() != "live" {
			t.Errorf("the app's live revision after a preview's removal: %d %q", w.Code, w.Body.String())
		}
	}
	e.Table.RemoveApp("app1")
	for _, h := range []*Edge{e, follower} {
		if w := get(h, "shop-svc001.preview.apps.test"); w.Code != http.StatusGone {
			t.Errorf("a deleted app's preview: %d, want 410", w.Code)
		}
	}
	long := "a-very-long-slug-that-goes-on-and-on-well-past-the-label-bound-x"
	e.Table.SetPreview(Preview{ID: "lng001", AppID: "app3", Slug: long, DeployID: "d", Kind: revision.KindSource})
	host := names.PreviewHost(long, "lng001", "preview.apps.test")
	if !e.Serves(host) || !follower.Serves(host) {
		t.Errorf("the cut label %s does not name its preview", host)
	}
}
