package supervisor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/revision"
)

// throughInstances is what the edge process does with a request, over Local's Wake and Dial
// directly (no link, no pool): how these tests reach a service.
type throughInstances struct{ l *Local }

var throughTurn atomic.Int64

func (s throughInstances) ServeHTTP(w http.ResponseWriter, r *http.Request, route edge.Route) {
	wake := s.l.Wake
	if route.PreviewID != "" {
		wake = s.l.WakePreview
	}
	ids, err := wake(r.Context(), route)
	if err != nil {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	// Round robin over the app's web instances, as the edge balances across them.
	id := ids[int(throughTurn.Add(1))%len(ids)]
	target := &url.URL{Scheme: "http", Host: "instance"}
	proxy := &httputil.ReverseProxy{
		Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return s.l.Dial(ctx, id)
		}},
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = pr.In.Host },
	}
	proxy.ServeHTTP(w, r)
}

// An instance id is good while its process runs and is the app's; after a stop, Dial says
// gone (the edge then wakes the app again).
func TestDialSaysGoneForAStoppedInstance(t *testing.T) {
	l := &Local{}
	if _, err := l.Dial(context.Background(), "app/dep/1234"); !errors.Is(err, edgelink.ErrGone) {
		t.Fatalf("dial of an unknown instance: %v, want ErrGone", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := &proc{appID: "app", deployID: "dep", port: ln.Addr().(*net.TCPAddr).Port, exited: make(chan struct{}), cancel: func() {}}
	a := newAppProcs("dep", 1, revision.Formation{})
	a.web[1], a.webUp = p, true
	l.procs.swap("app", a)
	c, err := l.Dial(context.Background(), instanceID(p))
	if err != nil {
		t.Fatalf("dial of the live instance: %v", err)
	}
	c.Close()
	if _, err := l.Dial(context.Background(), "app/dep/1"); !errors.Is(err, edgelink.ErrGone) {
		t.Fatalf("dial of another port: %v, want ErrGone", err)
	}
	close(p.exited)
	if _, err := l.Dial(context.Background(), instanceID(p)); !errors.Is(err, edgelink.ErrGone) {
		t.Fatalf("dial after exit: %v, want ErrGone", err)
	}
}

// activeWeb is the app's web.1, or nil.
func (l *Local) activeWeb(appID string) *proc {
	l.procs.mu.Lock()
	defer l.procs.mu.Unlock()
	l.procs.init()
	if a := l.procs.apps[appID]; a != nil {
		return a.web[1]
	}
	return nil
}
