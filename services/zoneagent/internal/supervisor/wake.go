package supervisor

import (
	"context"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/revision"
)

// liveWeb returns the app's running web instances for route, starting them when the app
// naps (minScale 0) or has not served since the agent restarted: the first one healthy is
// returned at once, the rest of the formation's web quantity follows in the background.
// Concurrent first requests share one start. edgelink.ErrNoWeb when the revision declares
// no web or its formation runs none.
func (l *Local) liveWeb(ctx context.Context, route edge.Route) ([]*proc, error) {
	if ps := l.procs.liveWeb(route.AppID, route.DeployID); len(ps) > 0 {
		l.topUpWeb(route.AppID, len(ps))
		return ps, nil
	}
	unlock, err := l.procs.lock(ctx, route.AppID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if ps := l.procs.liveWeb(route.AppID, route.DeployID); len(ps) > 0 {
		return ps, nil
	}
	t := &l.procs
	a := t.app(route.AppID)
	if a != nil && a.deployID > route.DeployID {
		// The edge's route is older than the revision activated a moment ago (ids are UUIDv7
		// and sort by creation): it asks again with the new one.
		return nil, edgelink.ErrGone
	}
	if a == nil || a.deployID != route.DeployID {
		rev, err := l.loadRevision(ctx, route.DeployID)
		if err != nil {
			return nil, err
		}
		a = newAppProcs(route.DeployID, rev.MinScale, l.formationOf(ctx, route.DeployID))
		if old := t.swap(route.AppID, a); old != nil {
			go stopInstances(old)
		}
		defer func() { go l.converge(route.AppID) }() // its other types too
	}
	t.mu.Lock()
	ln, quantity, napping := a.launch, a.formation.Quantity(revision.Web), !a.webUp
	t.mu.Unlock()
	if quantity == 0 {
		return nil, edgelink.ErrNoWeb
	}
	if ln == nil {
		if ln, err = l.launchOf(ctx, a); err != nil {
			return nil, err
		}
	}
	web, ok := processOf(ln, revision.Web)
	if !ok {
		return nil, edgelink.ErrNoWeb
	}
	// None of a's web instances runs (the check above): the first one starts now.
	t.mu.Lock()
	a.webUp = true
	t.mu.Unlock()
	p, err := ln.start(ctx, web, lowestFree(a, t))
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	current := t.apps[route.AppID] == a
	old := a.web[p.n]
	if current {
		a.web[p.n] = p
	}
	t.mu.Unlock()
	if !current {
		p.stop() // the app was deleted meanwhile
		return nil, edgelink.ErrGone
	}
	if old != nil {
		go old.stop()
	}
	appWakes.Inc() // metrics.go
	if napping && l.Napped != nil {
		l.Napped(ctx, route.AppID, false)
	}
	if quantity > 1 {
		go l.converge(route.AppID)
	}
	l.report(route.AppID)
	return l.procs.liveWeb(route.AppID, route.DeployID), nil
}

// lowestFree is the lowest web instance number with no running instance.
func lowestFree(a *appProcs, t *processTable) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n := 1; ; n++ {
		if p := a.web[n]; p == nil || !p.alive() {
			return n
		}
	}
}

// topUpWeb starts, in the background, the web instances an app runs fewer of than its
// formation wants (one exited): web restarts on request.
func (l *Local) topUpWeb(appID string, running int) {
	t := &l.procs
	t.mu.Lock()
	a := t.apps[appID]
	short := a != nil && a.webUp && int64(running) < a.formation.Quantity(revision.Web)
	t.mu.Unlock()
	if !short {
		return
	}
	if unlock, ok := t.tryLock(appID); ok {
		go func() {
			defer unlock()
			if err := l.convergeLocked(context.Background(), appID); err != nil {
				l.logger().Warn("restart an app's web instances", "app", appID, "err", err.Error())
			}
		}()
	}
}
