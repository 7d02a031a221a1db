package edgeproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// A preview's route is a proxy of its own, woken by its preview id (never as the app's live
// revision); a Set-Cookie of the preview's for the previews' domain is dropped as one for
// the apps' domain is.
func TestPreviewRouteWakesThePreview(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "all=1; Domain=preview.apps.test")
		w.Header().Add("Set-Cookie", "own=1")
		io.WriteString(w, "hello")
	}))
	defer app.Close()
	link := newFakeLink()
	link.serve("i1", app.Listener.Addr().String())
	p := newProxy(link)
	p.AppsDomain, p.PreviewsDomain, p.Logs = "apps.test", "preview.apps.test", &lines{}
	pr := edge.Route{AppID: "a1", DeployID: "d9", Kind: revision.KindSource, PreviewID: "abc123"}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "http://shop-abc123.preview.apps.test/", nil), pr)
	if w.Code != http.StatusOK || w.Body.String() != "hello" {
		t.Fatalf("preview: %d %q", w.Code, w.Body.String())
	}
	if got := w.Result().Header.Values("Set-Cookie"); !slices.Equal(got, []string{"own=1"}) {
		t.Fatalf("cookies passed: %q", got)
	}
	if !slices.Equal(link.previewWakes, []string{"a1/abc123"}) {
		t.Fatalf("preview wakes %q", link.previewWakes)
	}
	if p.app(pr) == p.app(edge.Route{AppID: "a1", DeployID: "d9", Kind: revision.KindSource}) {
		t.Fatal("the preview shares the app's proxy")
	}
	// The app's own answers keep a cookie for the previews' domain: only a preview's is shared.
	w = httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "http://a.apps.test/", nil), edge.Route{AppID: "a1", DeployID: "d1", Kind: revision.KindSource})
	if got := w.Result().Header.Values("Set-Cookie"); len(got) != 2 {
		t.Fatalf("the app's cookies: %q", got)
	}
}
