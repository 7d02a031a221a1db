package supervisor

import (
	"context"
	"fmt"
	"os"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/zoneagent/internal/edge"
)

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
