package edgeproxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
)

// fakeLink is the runtime: instance "i<n>" is the n-th process; only the current one dials.
type fakeLink struct {
	target string
	mu     sync.Mutex
	n      int
	wakes  int
	dials  int
}

func (f *fakeLink) Wake(context.Context, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakes++
	if f.n == 0 {
		f.n = 1
	}
	return fmt.Sprintf("i%d", f.n), nil
}

func (f *fakeLink) Dial(ctx context.Context, id string) (net.Conn, error) {
	f.mu.Lock()
	cur := fmt.Sprintf("i%d", f.n)
	f.dials++
	f.mu.Unlock()
	if id != cur {
		return nil, edgelink.ErrGone
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", f.target)
}

// restart makes the next instance current (the process crashed and was started again).
func (f *fakeLink) restart() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) Line(appID, deployID, stream, message string, _ int) {
	l.mu.Lock()
	l.got = append(l.got, appID+" "+stream+": "+message)
	l.mu.Unlock()
}

func get(t *testing.T, p *Proxy, route edge.Route) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "http://a.apps.test/", nil), route)
	return w.Code, w.Body.String()
}

// Requests reach the instance through the link; a wake is asked at most once a second per
// app; after the instance is gone, the proxy wakes the app again and carries on; a shared
// cookie is dropped and the app's log told once.
func TestProxyReachesInstancesThroughTheLink(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "sid=1; Domain=apps.test")
		w.Header().Add("Set-Cookie", "own=1")
		io.WriteString(w, "hello "+r.Host)
	}))
	defer app.Close()
	link := &fakeLink{target: app.Listener.Addr().String()}
	logs := &lines{}
	p := &Proxy{Link: link, AppsDomain: "apps.test", Logs: logs, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	route := edge.Route{AppID: "a1", DeployID: "d1"}
	for range 20 {
		if code, body := get(t, p, route); code != http.StatusOK || body != "hello a.apps.test" {
			t.Fatalf("%d %q", code, body)
		}
	}
	if link.wakes != 1 {
		t.Fatalf("%d wakes for 20 requests within a second, want 1", link.wakes)
	}
	// The process is gone: pooled connections still reach the test's server, so drop them
	// as a dead process would.
	link.restart()
	p.app(route).transport.CloseIdleConnections()
	if code, body := get(t, p, route); code != http.StatusOK || body != "hello a.apps.test" {
		t.Fatalf("after a restart: %d %q", code, body)
	}
	if link.wakes != 2 {
		t.Fatalf("%d wakes, want a second one after gone", link.wakes)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "http://a.apps.test/", nil), route)
	if got := w.Result().Header.Values("Set-Cookie"); len(got) != 1 || got[0] != "own=1" {
		t.Fatalf("cookies passed: %q", got)
	}
	if len(logs.got) != 1 || !strings.Contains(logs.got[0], "a1 system: the edge dropped Set-Cookie sid") {
		t.Fatalf("app log: %q", logs.got)
	}
}

// A wake that fails is a 503, not a hang or a 502.
func TestProxyAnswers503WhenTheWakeFails(t *testing.T) {
	p := &Proxy{Link: failingLink{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if code, _ := get(t, p, edge.Route{AppID: "a1", DeployID: "d1"}); code != http.StatusServiceUnavailable {
		t.Fatalf("%d, want 503", code)
	}
}

type failingLink struct{}

func (failingLink) Wake(context.Context, string) (string, error) { return "", edgelink.ErrRefused }
func (failingLink) Dial(context.Context, string) (net.Conn, error) {
	return nil, edgelink.ErrRefused
}
