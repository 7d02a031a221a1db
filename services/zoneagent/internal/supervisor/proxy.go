package supervisor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"tori.dev/pkg/lifecycle"
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

// running returns the app's live process, starting it when needed. Concurrent first
// requests share one start.
func (l *Local) running(ctx context.Context, route edge.Route) (*proc, error) {
	for {
		l.mu.Lock()
		l.init()
		if p := l.active[route.AppID]; p != nil && p.deployID == route.DeployID && p.alive() {
			l.mu.Unlock()
			return p, nil
		}
		if ch, ok := l.waking[route.AppID]; ok {
			l.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		l.waking[route.AppID] = ch
		l.mu.Unlock()
		p, err := l.wake(ctx, route)
		l.mu.Lock()
		delete(l.waking, route.AppID)
		if err == nil {
			if old := l.active[route.AppID]; old != nil && old != p {
				go old.stop()
			}
			l.active[route.AppID] = p
		}
		l.mu.Unlock()
		close(ch)
		if err == nil {
			appWakes.Inc() // metrics.go
		}
		if l.Napped != nil && err == nil {
			l.Napped(ctx, route.AppID, false)
		}
		return p, err
	}
}

// wake starts a live revision's process again from its tree (or its image), without
// rebuilding or re-running its release Job.
func (l *Local) wake(ctx context.Context, route edge.Route) (*proc, error) {
	if l.Revision == nil {
		return nil, fmt.Errorf("no revision source")
	}
	rev, err := l.Revision(ctx, route.DeployID)
	if err != nil {
		return nil, err
	}
	if err := l.identity(ctx, rev.AppID); err != nil {
		return nil, err
	}
	if rev.Kind.Image() {
		return l.wakeContainer(ctx, rev)
	}
	if err := l.appDisk(rev.AppID); err != nil {
		return nil, err
	}
	dir := l.tree(rev.AppID, rev.DeployID)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("the revision's tree is gone: %w", err)
	}
	// Planned again from the tree, as it was before the build (the manifest is read anew
	// the same way): the start line and its environment.
	plan, m, _, err := l.planBuild(dir)
	if err != nil {
		return nil, err
	}
	m.Start = plan.Start
	vars, err := l.openEnv(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.start(ctx, rev, dir, m, withPlanEnv(vars, plan), NewRedactor(vars))
}

// NapJob naps idle minScale-0 services: it looks a few times per ZONE_IDLE_AFTER, at least
// every 30 s.
func (l *Local) NapJob() lifecycle.Job {
	every := l.IdleAfter / 4
	if every <= 0 || every > 30*time.Second {
		every = 30 * time.Second
	}
	return lifecycle.Job{Name: "nap idle services", Every: every, Run: func(ctx context.Context) (int64, error) {
		return int64(l.napIdle(ctx, time.Now())), nil
	}}
}

func (l *Local) napIdle(ctx context.Context, now time.Time) int {
	if l.IdleAfter <= 0 {
		return 0
	}
	l.mu.Lock()
	l.init()
	var nap []*proc
	for app, p := range l.active {
		if p.minScale == 0 && now.Sub(time.Unix(0, p.lastUsed.Load())) >= l.IdleAfter {
			nap = append(nap, p)
			delete(l.active, app)
		}
	}
	l.mu.Unlock()
	for _, p := range nap {
		p.stop()
		if l.Napped != nil {
			l.Napped(ctx, p.appID, true)
		}
	}
	return len(nap)
}
