// Package edgeproxy is the edge process's way to services: a reverse proxy per app over
// connections the runtime makes inside the app's namespace and passes over the edge link
// (internal/edgelink), balanced across the app's web instances (the fewest outstanding
// requests first; one that fails is taken out a while). The edge itself never enters a
// namespace.
package edgeproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
)

// Link is the runtime, as the edge reaches it (edgelink.Client).
type Link interface {
	// Wake answers the ids of the app's live web instances (edgelink.ErrNoWeb: it runs none).
	Wake(ctx context.Context, appID string) ([]string, error)
	Dial(ctx context.Context, instanceID string) (net.Conn, error)
}

// PreviewLink is a Link that also wakes previews (edgelink.Client): a preview's route is
// woken by its preview id, never as the app's live revision.
type PreviewLink interface {
	WakePreview(ctx context.Context, appID, previewID string) ([]string, error)
}

// LogSink takes a line for an app's own log (busapi.Logs, through the edge's outbox).
type LogSink interface {
	Line(appID, deployID, stream, message string, redactions int)
}

// Timing of the proxy.
const (
	// wakeEvery: an app's instances are asked for again at most once a second (also when
	// every one is out, or the app runs no web process); the asking is also what tells the
	// runtime the app is in use (napping counts from it).
	wakeEvery = time.Second
	// outFor is how long an instance that failed to take a request (no connection, or the
	// connection failed before any byte of an answer) gets none: long enough for a stuck or
	// dying process not to cost every visitor a failed try, short enough that one that
	// hiccuped is soon back.
	outFor = 5 * time.Second
	// sharedCookieNote bounds how often an app's dropped cookies are written to its log.
	sharedCookieNote = time.Minute
	// instanceIdleConns is how many kept-alive connections the edge holds to one instance
	// between requests. A visitor's request past them dials anew, through the link and the
	// app's namespace: with 16, 64 concurrent visitors made the edge dial for most requests (a
	// sixth of its CPU in bench-edge's profile). 64 covers that load and stays a sixteenth of
	// a process's 1,024 open files; an idle connection is closed after 30 s. Several instances
	// share the visitors, so together they keep about what one did (connections are only
	// kept that were once in use at the same time).
	instanceIdleConns = 64
)

// The proxy's counters are registered by the first proxy made: only the edge process shows
// them (the agent shows the edge's families from the edge's own /metrics).
var (
	sharedCookiesDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tori_edge_shared_cookies_dropped_total",
		Help: "Set-Cookie headers the edge dropped from apps' answers for naming APPS_DOMAIN or a parent of it as their Domain.",
	})
	instanceEjections = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tori_edge_instance_ejections_total",
		Help: "Times the edge took an app's web instance out for a while after it failed to take a request (no connection, or the connection failed before any answer).",
	})
	registerMetrics sync.Once
)

// Proxy serves services' requests (edge.Services).
type Proxy struct {
	Link       Link
	AppsDomain string // a Set-Cookie an app sends for it (or a parent) is dropped
	// PreviewsDomain: a preview's Set-Cookie for it (or a parent) is dropped too, so no
	// preview sets a cookie every other preview receives.
	PreviewsDomain string
	Logs           LogSink
	Log            *slog.Logger

	mu   sync.Mutex
	apps map[string]*appProxy // by app id
}

// appProxy is one app's revision as the edge reaches it: the web instances it last learned
// of (each with its own pool of connections, kept across requests) and the proxy that
// balances across them (balance.go).
type appProxy struct {
	appID, deployID string
	previewID       string // a preview's proxy: woken through PreviewLink
	link            Link
	log             *slog.Logger
	set             atomic.Pointer[instanceSet]
	wakes           atomic.Uint64 // how many sets were stored: a wake's waiters see a new one
	lastWake        atomic.Int64  // unix nanoseconds
	wakeMu          sync.Mutex
	turn            atomic.Uint64 // where the next choice starts: equals share in turn
	proxy           *httputil.ReverseProxy
	cookieNoted     atomic.Int64 // unix nanoseconds of the last log line about a cookie
}

// noWebPage is the answer for an app whose live revision runs no web process.
const noWebPage = "503 Service Unavailable: this app runs no web process, so nothing here answers requests.\n"

// ServeHTTP proxies a request to one of the app's live web instances, waking them when they
// nap; the request is answered once one is healthy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request, route edge.Route) {
	a := p.app(route)
	set, err := a.instances(r.Context(), false)
	if err == nil && set.noWeb {
		err = edgelink.ErrNoWeb
	}
	if err != nil {
		p.unavailable(w, r, route.AppID, err)
		return
	}
	a.proxy.ServeHTTP(w, r)
}

// unavailable is the 503 for an app the edge cannot reach: a page of its own when the app
// runs no web process (that is the app's formation, not a fault to log).
func (p *Proxy) unavailable(w http.ResponseWriter, r *http.Request, appID string, err error) {
	if errors.Is(err, edgelink.ErrNoWeb) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, noWebPage, http.StatusServiceUnavailable)
		return
	}
	if r.Context().Err() == nil {
		p.Log.WarnContext(r.Context(), "wake service", "app", appID, "err", err.Error())
	}
	http.Error(w, "service unavailable", http.StatusServiceUnavailable)
}

// app is the route's proxy, made on its first request; a new revision gets a new one (and
// the old one's idle connections are closed).
func (p *Proxy) app(route edge.Route) *appProxy {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apps == nil {
		p.apps = map[string]*appProxy{}
	}
	key := route.AppID
	if route.PreviewID != "" {
		key += "/preview/" + route.PreviewID
	}
	a := p.apps[key]
	if a != nil && a.deployID == route.DeployID {
		return a
	}
	if a != nil {
		a.closeIdle()
	}
	a = p.newApp(route)
	p.apps[key] = a
	return a
}

func (p *Proxy) newApp(route edge.Route) *appProxy {
	registerMetrics.Do(func() { prometheus.MustRegister(sharedCookiesDropped, instanceEjections) })
	a := &appProxy{appID: route.AppID, deployID: route.DeployID, previewID: route.PreviewID, link: p.Link, log: p.Log}
	// The host only keys the pools; every connection comes from the link.
	target := &url.URL{Scheme: "http", Host: "instance.invalid"}
	a.proxy = &httputil.ReverseProxy{
		Transport: a,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		ModifyResponse: p.dropSharedCookies(a),
		BufferPool:     copyBuffers,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, edgelink.ErrNoWeb) || errors.Is(err, errNoInstance) {
				p.unavailable(w, r, a.appID, err)
				return
			}
			http.Error(w, "bad gateway", http.StatusBadGateway)
		},
	}
	return a
}

// dropSharedCookies is the proxy's answer filter: a Set-Cookie for the whole apps domain
// (edge.DropSharedCookies) never leaves the edge, and the app's own log says why, at most once
// a minute per app (an app may send one on every answer).
func (p *Proxy) dropSharedCookies(a *appProxy) func(*http.Response) error {
	return func(resp *http.Response) error {
		if p.AppsDomain == "" {
			return nil
		}
		dropped := edge.DropSharedCookies(resp.Header, p.AppsDomain)
		if a.previewID != "" && p.PreviewsDomain != "" {
			dropped = append(dropped, edge.DropSharedCookies(resp.Header, p.PreviewsDomain)...)
		}
		if len(dropped) == 0 {
			return nil
		}
		sharedCookiesDropped.Add(float64(len(dropped)))
		now := time.Now().UnixNano()
		last := a.cookieNoted.Load()
		if p.Logs != nil && now-last >= int64(sharedCookieNote) && a.cookieNoted.CompareAndSwap(last, now) {
			p.Logs.Line(a.appID, a.deployID, "system", fmt.Sprintf(
				"the edge dropped Set-Cookie %s: its Domain is %s or a parent of it, so every app would receive it; set the cookie without Domain (for this app's own host)",
				strings.Join(dropped, ", "), p.AppsDomain), 0)
		}
		return nil
	}
}

// copyBuffers are the proxies' 32 KiB buffers for copying answers: without a pool each answer
// allocated its own (a profile of the edge under load put a tenth of its CPU in allocation
// and the collector).
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *bufferPool) Put(v []byte) { b.pool.Put(&v) }
