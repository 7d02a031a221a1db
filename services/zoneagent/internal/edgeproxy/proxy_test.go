package edgeproxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
)

// fakeLink is the runtime: a wake answers the live instance ids (or no web), a dial reaches
// the instance's address (a refused connection comes back as the real link's refusal) or
// is gone for an id that is not live any more. Everything asked is counted.
type fakeLink struct {
	mu    sync.Mutex
	live  []string
	addr  map[string]string
	noWeb bool
	wakes int
	dials map[string]int
	// previewWakes are the previews woken (app/preview).
	previewWakes []string
}

func newFakeLink() *fakeLink {
	return &fakeLink{addr: map[string]string{}, dials: map[string]int{}}
}

// serve makes id a live instance at addr.
func (f *fakeLink) serve(id, addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = append(f.live, id)
	f.addr[id] = addr
}

// stop makes id not live any more (its process exited).
func (f *fakeLink) stop(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = slices.DeleteFunc(f.live, func(x string) bool { return x == id })
}

func (f *fakeLink) Wake(context.Context, string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakes++
	if f.noWeb {
		return nil, edgelink.ErrNoWeb
	}
	return slices.Clone(f.live), nil
}

func (f *fakeLink) WakePreview(ctx context.Context, appID, previewID string) ([]string, error) {
	f.mu.Lock()
	f.previewWakes = append(f.previewWakes, appID+"/"+previewID)
	f.mu.Unlock()
	return f.Wake(ctx, appID)
}

func (f *fakeLink) Dial(ctx context.Context, id string) (net.Conn, error) {
	f.mu.Lock()
	f.dials[id]++
	live, addr := slices.Contains(f.live, id), f.addr[id]
	f.mu.Unlock()
	if !live {
		return nil, edgelink.ErrGone
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial failed: %v", edgelink.ErrRefused, err)
	}
	return c, nil
}

func (f *fakeLink) count() (wakes int, dials map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wakes, maps.Clone(f.dials)
}

// backend is an instance's process: it counts what it answered and echoes a request's body.
type backend struct {
	*httptest.Server
	mu   sync.Mutex
	hits int
}

func newBackend(t *testing.T, name string, slow func()) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if slow != nil {
			slow()
		}
		b.mu.Lock()
		b.hits++
		b.mu.Unlock()
		io.WriteString(w, name+" "+string(body))
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits
}

func (b *backend) addr() string { return b.Listener.Addr().String() }

// deadAddr is an address nothing listens on: a dial to it is refused.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// hangupAddr accepts connections and closes them at once: the connection fails after it was
// made, before any byte of an answer.
func hangupAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
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

func newProxy(link Link) *Proxy {
	return &Proxy{Link: link, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

var route = edge.Route{AppID: "a1", DeployID: "d1"}

func do(p *Proxy, method, body string) (int, string) {
	w := httptest.NewRecorder()
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, "http://a.apps.test/", nil)
	} else {
		r = httptest.NewRequest(method, "http://a.apps.test/", strings.NewReader(body))
	}
	p.ServeHTTP(w, r, route)
	return w.Code, w.Body.String()
}

func get(p *Proxy) (int, string) { return do(p, http.MethodGet, "") }

// parallel sends n GETs from workers at once; every one must be a 200.
func parallel(t *testing.T, p *Proxy, n, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	errs := make(chan string, n)
	for range workers {
		wg.Go(func() {
			for range jobs {
				if code, body := get(p); code != http.StatusOK {
					errs <- fmt.Sprintf("%d %q", code, body)
				}
			}
		})
	}
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("a request failed: %s", e)
	}
}

// Requests reach the instance through the link; a wake is asked at most once a second per
// app; after the instance is gone (restarted: another id), the proxy wakes the app again and
// carries on; a shared cookie is dropped and the app's log told once.
func TestProxyReachesInstancesThroughTheLink(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "sid=1; Domain=apps.test")
		w.Header().Add("Set-Cookie", "own=1")
		io.WriteString(w, "hello "+r.Host)
	}))
	defer app.Close()
	link := newFakeLink()
	link.serve("i1", app.Listener.Addr().String())
	logs := &lines{}
	p := newProxy(link)
	p.AppsDomain, p.Logs = "apps.test", logs
	for range 20 {
		if code, body := get(p); code != http.StatusOK || body != "hello a.apps.test" {
			t.Fatalf("%d %q", code, body)
		}
	}
	if wakes, _ := link.count(); wakes != 1 {
		t.Fatalf("%d wakes for 20 requests within a second, want 1", wakes)
	}
	// The process is gone and another runs: pooled connections still reach the test's
	// server, so drop them as a dead process would.
	link.stop("i1")
	link.serve("i2", app.Listener.Addr().String())
	p.app(route).closeIdle()
	if code, body := get(p); code != http.StatusOK || body != "hello a.apps.test" {
		t.Fatalf("after a restart: %d %q", code, body)
	}
	if wakes, dials := link.count(); wakes != 2 || dials["i2"] != 1 {
		t.Fatalf("%d wakes, dials %v: want a second wake after gone, then i2", wakes, dials)
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

// Three instances that answer alike (in a couple of milliseconds, as an app's page does)
// share requests evenly (each within ±15 % of a third), whether the requests come one by one
// or at once.
func TestProxySpreadsRequestsEvenlyAcrossInstances(t *testing.T) {
	for name, workers := range map[string]int{"one by one": 1, "at once": 12} {
		t.Run(name, func(t *testing.T) {
			link := newFakeLink()
			var backends []*backend
			for i := range 3 {
				b := newBackend(t, fmt.Sprint("web.", i+1), func() { sleep(2) })
				backends = append(backends, b)
				link.serve(fmt.Sprint("i", i+1), b.addr())
			}
			parallel(t, newProxy(link), 300, workers)
			for i, b := range backends {
				if n := b.count(); n < 85 || n > 115 {
					t.Errorf("instance %d answered %d of 300, want 100 ± 15", i+1, n)
				}
			}
		})
	}
}

// An instance that answers slowly has more requests outstanding, so it is sent fewer.
func TestProxySendsFewerRequestsToASlowInstance(t *testing.T) {
	link := newFakeLink()
	var backends []*backend
	for i := range 3 {
		var slow func()
		if i == 0 {
			slow = func() { sleep(100) }
		}
		b := newBackend(t, fmt.Sprint("web.", i+1), slow)
		backends = append(backends, b)
		link.serve(fmt.Sprint("i", i+1), b.addr())
	}
	parallel(t, newProxy(link), 300, 12)
	slow, fast1, fast2 := backends[0].count(), backends[1].count(), backends[2].count()
	if slow+fast1+fast2 != 300 || slow*2 > min(fast1, fast2) {
		t.Fatalf("slow instance answered %d, the others %d and %d: want it under half of either", slow, fast1, fast2)
	}
}

// An instance that refuses connections is taken out after one failure: the request that
// met it (a GET, or a POST whose body was never sent) is served by another with its body
// intact, the dead one is not dialed again while out, and the ejection is counted once.
func TestProxyTakesOutAnInstanceThatRefuses(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			link := newFakeLink()
			link.serve("dead", deadAddr(t))
			good := newBackend(t, "good", nil)
			link.serve("good", good.addr())
			before := ejections(t)
			p := newProxy(link)
			for i := range 10 {
				body := ""
				if method == http.MethodPost {
					body = fmt.Sprint("order ", i)
				}
				if code, got := do(p, method, body); code != http.StatusOK || got != "good "+body {
					t.Fatalf("request %d: %d %q", i, code, got)
				}
			}
			_, dials := link.count()
			if dials["dead"] != 1 || good.count() != 10 {
				t.Fatalf("dials %v, good answered %d: want the dead one tried once and good all 10", dials, good.count())
			}
			if got := ejections(t) - before; got != 1 {
				t.Fatalf("%v ejections counted, want 1", got)
			}
		})
	}
}

// A connection that fails after it was made (before any answer) takes the instance out too;
// a GET goes to another instance, but a POST that may have reached the app is not sent
// twice: the visitor gets the 502 and the other instance never sees it.
func TestProxyRetriesOnlyWhatCannotRunTwice(t *testing.T) {
	for _, tc := range []struct {
		method, body string
		want         int
	}{
		{http.MethodGet, "", http.StatusOK},
		{http.MethodPost, "charge the card", http.StatusBadGateway},
		{http.MethodPost, "", http.StatusBadGateway},
	} {
		t.Run(tc.method+" "+tc.body, func(t *testing.T) {
			link := newFakeLink()
			link.serve("hangup", hangupAddr(t))
			good := newBackend(t, "good", nil)
			link.serve("good", good.addr())
			p := newProxy(link)
			// Until a request meets the hangup instance (the first or the second).
			for range 2 {
				served := good.count()
				code, _ := do(p, tc.method, tc.body)
				if _, dials := link.count(); dials["hangup"] == 0 {
					if code != http.StatusOK {
						t.Fatalf("request to the good instance: %d", code)
					}
					continue
				}
				if code != tc.want {
					t.Fatalf("the request that met the hangup: %d, want %d", code, tc.want)
				}
				if tc.want != http.StatusOK && good.count() != served {
					t.Fatal("the POST reached the other instance too")
				}
				for range 5 {
					if code, _ := get(p); code != http.StatusOK {
						t.Fatalf("after the hangup: %d", code)
					}
				}
				if _, dials := link.count(); dials["hangup"] != 1 {
					t.Fatalf("dials %v: the hangup instance was tried again while out", dials)
				}
				return
			}
			t.Fatal("no request met the hangup instance")
		})
	}
}

// An instance the runtime says is gone is dropped at once, the app is woken again, and the
// request goes to an instance of the new list.
func TestProxyDropsAGoneInstanceAndWakesAgain(t *testing.T) {
	link := newFakeLink()
	var backends []*backend
	for i := range 3 {
		b := newBackend(t, fmt.Sprint("web.", i+1), nil)
		backends = append(backends, b)
		link.serve(fmt.Sprint("i", i+1), b.addr())
	}
	p := newProxy(link)
	parallel(t, p, 30, 1)
	// i2 exits and i4 replaces it (on i2's address: its pooled connections are closed as a
	// dead process's would be, so a dial is what meets the gone instance).
	link.stop("i2")
	link.serve("i4", backends[1].addr())
	for _, in := range p.app(route).set.Load().list {
		in.transport.CloseIdleConnections()
	}
	parallel(t, p, 30, 1)
	wakes, dials := link.count()
	if wakes != 2 || dials["i2"] != 2 || dials["i4"] != 1 {
		t.Fatalf("%d wakes, dials %v: want one more wake after i2 was gone, i2 met once more and i4 dialed", wakes, dials)
	}
	var ids []string
	for _, in := range p.app(route).set.Load().list {
		ids = append(ids, in.id)
	}
	if strings.Join(ids, ",") != "i1,i3,i4" {
		t.Fatalf("instances %v, want i1,i3,i4", ids)
	}
}

// When every instance is out, the app is asked again (at most once a second) and an
// instance it names now serves; until then a request is a 502 as before.
func TestProxyWakesAgainWhenEveryInstanceIsOut(t *testing.T) {
	link := newFakeLink()
	link.serve("dead1", deadAddr(t))
	link.serve("dead2", deadAddr(t))
	p := newProxy(link)
	if code, _ := get(p); code != http.StatusBadGateway {
		t.Fatalf("both instances refuse: %d, want 502", code)
	}
	if _, dials := link.count(); dials["dead1"] != 1 || dials["dead2"] != 1 {
		t.Fatalf("dials %v: want each tried once (the request retried once)", dials)
	}
	good := newBackend(t, "good", nil)
	link.serve("good", good.addr())
	sleep(1100)
	if code, body := get(p); code != http.StatusOK || body != "good " {
		t.Fatalf("after a new instance: %d %q", code, body)
	}
	if wakes, _ := link.count(); wakes != 2 {
		t.Fatalf("%d wakes, want 2", wakes)
	}
}

// An app that runs no web process gets a 503 page saying so, and the runtime is asked at
// most once a second however many requests come.
func TestProxyAnswers503ForAnAppWithoutWeb(t *testing.T) {
	link := newFakeLink()
	link.noWeb = true
	p := newProxy(link)
	for range 10 {
		code, body := get(p)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "runs no web process") {
			t.Fatalf("%d %q, want 503 saying no web process", code, body)
		}
	}
	if wakes, _ := link.count(); wakes != 1 {
		t.Fatalf("%d wakes for 10 requests within a second, want 1", wakes)
	}
	sleep(1100)
	get(p)
	if wakes, _ := link.count(); wakes != 2 {
		t.Fatalf("%d wakes after a second, want 2", wakes)
	}
	// The formation gains a web instance: the next wake serves it.
	good := newBackend(t, "good", nil)
	link.mu.Lock()
	link.noWeb = false
	link.mu.Unlock()
	link.serve("web.1", good.addr())
	sleep(1100)
	if code, _ := get(p); code != http.StatusOK {
		t.Fatalf("after web came: %d", code)
	}
}

// A wake that fails is a 503, not a hang or a 502.
func TestProxyAnswers503WhenTheWakeFails(t *testing.T) {
	p := newProxy(failingLink{})
	if code, body := get(p); code != http.StatusServiceUnavailable || strings.Contains(body, "no web") {
		t.Fatalf("%d %q, want a plain 503", code, body)
	}
}

type failingLink struct{}

func (failingLink) Wake(context.Context, string) ([]string, error) {
	return nil, edgelink.ErrRefused
}
func (failingLink) Dial(context.Context, string) (net.Conn, error) {
	return nil, edgelink.ErrRefused
}

func sleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

func ejections(t *testing.T) float64 {
	t.Helper()
	registerMetrics.Do(func() { prometheus.MustRegister(sharedCookiesDropped, instanceEjections) })
	return testutil.ToFloat64(instanceEjections)
}
