package supervisor

import (
	"context"
	"fmt"
	"log/slog"

	"tori.dev/services/zoneagent/internal/edge"
)

// running returns the app's live process, starting it when needed. Concurrent first
// requests share one start.
func (l *Local) running(ctx context.Context, route edge.Route) (*proc, error) {
	t := &l.procs
	for {
		t.mu.Lock()
		t.init()
		if l.Log == nil {
			l.Log = slog.Default() // ServeHTTP's, set under the lock as Local's zero value allows
		}
		if p := t.active[route.AppID]; p != nil && p.deployID == route.DeployID && p.alive() {
			t.mu.Unlock()
			return p, nil
		}
		if ch, ok := t.waking[route.AppID]; ok {
			t.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		t.waking[route.AppID] = ch
		t.mu.Unlock()
		p, err := l.wake(ctx, route)
		t.mu.Lock()
		delete(t.waking, route.AppID)
		if err == nil {
			if old := t.active[route.AppID]; old != nil && old != p {
				go old.stop()
			}
			t.active[route.AppID] = p
		}
		t.mu.Unlock()
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
	if err := l.Identities.Ensure(ctx, rev.AppID); err != nil {
		return nil, err
	}
	return l.runtimeFor(rev.Kind).wake(ctx, rev)
}
