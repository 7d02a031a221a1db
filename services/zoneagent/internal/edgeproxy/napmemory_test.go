package edgeproxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// An app that was served once and then napped (its instance's process gone, so its
// connections closed) costs the edge its proxy and its instance's pool, a few KB: no
// goroutine and no buffer is held for it.
func TestANappingAppCostsTheEdgeAFewKB(t *testing.T) {
	const apps = 2_000
	link := newFakeLink()
	b := newBackend(t, "svc", nil)
	link.serve("web-1", b.addr())
	p := &Proxy{Link: link, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	settle := func() (heap uint64, goroutines int) {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	// One app first, so what is made once (metrics, pools) is not counted per app.
	serveOnce := func(i int) {
		route := edge.Route{AppID: fmt.Sprintf("app-%d", i), Slug: fmt.Sprintf("s%d", i), DeployID: "d1", Kind: revision.KindSource}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("GET", "http://s.apps.test/", nil), route)
		if w.Code != 200 {
			t.Fatalf("app %d: %d %s", i, w.Code, w.Body)
		}
	}
	serveOnce(-1)
	b.CloseClientConnections()
	time.Sleep(100 * time.Millisecond)
	heap0, g0 := settle()
	for i := range apps {
		serveOnce(i)
	}
	b.CloseClientConnections() // every instance naps: its process goes, and its connections
	var heap1 uint64
	var g1 int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		heap1, g1 = settle()
		if g1 <= g0+5 || time.Now().After(deadline) {
			break
		}
	}
	perApp := int64(heap1-heap0) / apps
	t.Logf("a napping app in the edge's proxy: %d B (goroutines %d -> %d for %d apps)", perApp, g0, g1, apps)
	if g1 > g0+5 {
		t.Fatalf("%d goroutines left for %d napping apps", g1-g0, apps)
	}
	if perApp > 8<<10 {
		t.Fatalf("a napping app holds %d B of the edge's heap, want at most 8 KB", perApp)
	}
}
