// Package edgeproxy is the edge process's way to services: a reverse proxy per app over
// connections the runtime makes inside the app's namespace and passes over the edge link
// (internal/edgelink). The edge itself never enters a namespace.
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
	Wake(ctx context.Context, appID string) (string, error)
	Dial(ctx context.Context, instanceID string) (net.Conn, error)
}

// LogSink takes a line for an app's own log (busapi.Logs, through the edge's outbox).
type LogSink interface {
	Line(appID, deployID, stream, message string, redactions int)
}

// Timing of the proxy.
const (
	// wakeEvery: an app's instance is asked for again at most once a second; the asking is
	// also what tells the runtime the app is in use (napping counts from it).
	wakeEvery = time.Second
	// sharedCookieNote bounds how often an app's dropped cookies are written to its log.
	sharedCookieNote = time.Minute
	// appIdleConns is how many kept-alive connections the edge holds to one app between
	// requests. A visitor's request past them dials anew, through the link and the app's
	// namespace: with 16, 64 concurrent visitors made the edge dial for most requests (a
	// sixth of its CPU in bench-edge's profile). 64 covers that load and stays a sixteenth of
	// a process's 1,024 open files; an idle connection is closed after 30 s.
	appIdleConns = 64
)

// sharedCookiesDropped is registered by the first proxy made: only the edge process shows it
// (the agent shows the edge's families from the edge's own /metrics).
var (
	sharedCookiesDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tori_edge_shared_cookies_dropped_total",
		Help: "Set-Cookie headers the edge dropped from apps' answers for naming APPS_DOMAIN or a parent of it as their Domain.",
	})
	registerMetrics sync.Once
)

// Proxy serves services' requests (edge.Services).
type Proxy struct {
	Link       Link
	AppsDomain string // a Set-Cookie an app sends for it (or a parent) is dropped
	Logs       LogSink
	Log        *slog.Logger

	mu   sync.Mutex
	apps map[string]*appProxy // by app id
}

// appProxy is one app's revision as the edge reaches it: the instance it last learned of,
// and a proxy whose pool of connections is kept across requests.
type appProxy struct {
	appID, deployID string
	link            Link
	instance        atomic.Pointer[string]
	lastWake        atomic.Int64 // unix nanoseconds
	wakeMu          sync.Mutex
	transport       *http.Transport
	proxy           *httputil.ReverseProxy
	cookieNoted     atomic.Int64 // unix nanoseconds of the last log line about a cookie
}

// ServeHTTP proxies a request to the app's live instance, waking it when it naps; the
// request is answered once it is healthy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request, route edge.Route) {
	a := p.app(route)
	if _, err := a.current(r.Context(), false); err != nil {
		if r.Context().Err() == nil {
			p.Log.WarnContext(r.Context(), "wake service", "app", route.AppID, "err", err.Error())
		}
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	a.proxy.ServeHTTP(w, r)
}

// app is the route's proxy, made on its first request; a new revision gets a new one (and
// the old one's idle connections are closed).
func (p *Proxy) app(route edge.Route) *appProxy {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apps == nil {
		p.apps = map[string]*appProxy{}
	}
	a := p.apps[route.AppID]
	if a != nil && a.deployID == route.DeployID {
		return a
	}
	if a != nil {
		a.transport.CloseIdleConnections()
	}
	a = p.newApp(route)
	p.apps[route.AppID] = a
	return a
}

func (p *Proxy) newApp(route edge.Route) *appProxy {
	registerMetrics.Do(func() { prometheus.MustRegister(sharedCookiesDropped) })
	a := &appProxy{appID: route.AppID, deployID: route.DeployID, link: p.Link}
	a.transport = &http.Transport{DialContext: a.dial, MaxIdleConnsPerHost: appIdleConns, IdleConnTimeout: 30 * time.Second}
	// The host only keys the pool; every connection comes from the link.
	target := &url.URL{Scheme: "http", Host: "instance.invalid"}
	a.proxy = &httputil.ReverseProxy{
		Transport: a.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		ModifyResponse: p.dropSharedCookies(a),
		BufferPool:     copyBuffers,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
		},
	}
	return a
}

// current is the app's instance id: the one last learned while it is under a second old;
// else (or when forced, after "gone") asked of the runtime, by one request while the
// others go on with the one they have.
func (a *appProxy) current(ctx context.Context, force bool) (string, error) {
	known := a.instance.Load()
	last := a.lastWake.Load()
	now := time.Now().UnixNano()
	if known != nil && !force && now-last < int64(wakeEvery) {
		return *known, nil
	}
	if known != nil && !force && !a.lastWake.CompareAndSwap(last, now) {
		return *known, nil // another request asks
	}
	a.wakeMu.Lock()
	defer a.wakeMu.Unlock()
	if cur := a.instance.Load(); cur != known && cur != nil {
		return *cur, nil // learned while this one waited
	}
	id, err := a.link.Wake(ctx, a.appID)
	if err != nil {
		return "", err
	}
	if known == nil || *known != id {
		// A new process: connections to the old one are of no use.
		a.transport.CloseIdleConnections()
	}
	a.instance.Store(&id)
	a.lastWake.Store(time.Now().UnixNano())
	return id, nil
}

// dial is the transport's way in: a connection to the current instance, passed by the
// runtime; when that instance is gone, the app is woken again and asked once more.
func (a *appProxy) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	id, err := a.current(ctx, false)
	if err != nil {
		return nil, err
	}
	c, err := a.link.Dial(ctx, id)
	if !errors.Is(err, edgelink.ErrGone) {
		return c, err
	}
	if id, err = a.current(ctx, true); err != nil {
		return nil, err
	}
	return a.link.Dial(ctx, id)
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
