package supervisor

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
)

// ServeHTTP proxies a request to the app's process, starting it first when it naps (minScale
// 0) or has not run since the agent restarted; the request is answered once it is healthy.
func (l *Local) ServeHTTP(w http.ResponseWriter, r *http.Request, route edge.Route) {
	p, err := l.running(r.Context(), route)
	if err != nil {
		l.Log.WarnContext(r.Context(), "wake service", "app", route.AppID, "err", err.Error())
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	p.lastUsed.Store(time.Now().UnixNano())
	p.reverseProxy(l.dropSharedCookies(p)).ServeHTTP(w, r)
}

// sharedCookieNote bounds how often one process's dropped cookies are written to its log.
const sharedCookieNote = time.Minute

// dropSharedCookies is the proxy's answer filter: a Set-Cookie for the whole apps domain
// (edge.DropSharedCookies) never leaves the edge, and the app's own log says why, at most once
// a minute per process (an app may send one on every answer).
func (l *Local) dropSharedCookies(p *proc) func(*http.Response) error {
	return func(resp *http.Response) error {
		if l.AppsDomain == "" {
			return nil
		}
		dropped := edge.DropSharedCookies(resp.Header, l.AppsDomain)
		if len(dropped) == 0 {
			return nil
		}
		sharedCookiesDropped.Add(float64(len(dropped))) // metrics.go
		now := time.Now().UnixNano()
		last := p.cookieNoted.Load()
		if l.Logs != nil && now-last >= int64(sharedCookieNote) && p.cookieNoted.CompareAndSwap(last, now) {
			l.Logs.Line(p.appID, p.deployID, "system", fmt.Sprintf(
				"the edge dropped Set-Cookie %s: its Domain is %s or a parent of it, so every app would receive it; set the cookie without Domain (for this app's own host)",
				strings.Join(dropped, ", "), l.AppsDomain), 0)
		}
		return nil
	}
}

// reverseProxy is the process's proxy, made on its first request and kept: the target and the
// way in never change while the process runs.
func (p *proc) reverseProxy(modify func(*http.Response) error) *httputil.ReverseProxy {
	p.proxyOnce.Do(func() {
		target := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p.port)}
		p.proxy = &httputil.ReverseProxy{
			Transport: p.roundTripper(),
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host
				pr.SetXForwarded()
			},
			ModifyResponse: modify,
			BufferPool:     copyBuffers,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
				http.Error(w, "bad gateway", http.StatusBadGateway)
			},
		}
	})
	return p.proxy
}

// copyBuffers are the proxies' 32 KiB buffers for copying answers: without a pool each answer
// allocated its own (a profile of the edge under load put a tenth of its CPU in allocation
// and the collector).
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *bufferPool) Put(v []byte) { b.pool.Put(&v) }
