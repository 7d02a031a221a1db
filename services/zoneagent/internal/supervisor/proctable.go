package supervisor

import (
	"sync"
	"time"
)

// processTable is every process Local keeps: the one each app's traffic goes to, the
// healthy ones waiting for activation, and the apps being woken. Its methods take
// processes out of the table; the caller stops them, outside the lock.
type processTable struct {
	mu       sync.Mutex
	active   map[string]*proc // by app: the process the edge proxies to
	prepared map[string]*proc // by deploy: healthy, waiting for activation
	waking   map[string]chan struct{}
}

// init makes the maps; called with mu held.
func (t *processTable) init() {
	if t.active == nil {
		t.active, t.prepared, t.waking = map[string]*proc{}, map[string]*proc{}, map[string]chan struct{}{}
	}
}

// keepPrepared holds a healthy process until the control plane activates or discards it;
// one left by an earlier attempt of the same deploy stops.
func (t *processTable) keepPrepared(p *proc) {
	t.mu.Lock()
	t.init()
	old := t.prepared[p.deployID]
	t.prepared[p.deployID] = p
	t.mu.Unlock()
	if old != nil && old != p {
		old.stop()
	}
}

// activate makes deployID's prepared process the app's (or, with none prepared, leaves the
// app without one until its next request) and returns the one before it, to stop.
func (t *processTable) activate(appID, deployID string) (old *proc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	p := t.prepared[deployID]
	delete(t.prepared, deployID)
	old = t.active[appID]
	if p != nil {
		t.active[appID] = p
	} else {
		delete(t.active, appID)
	}
	if old == p {
		return nil
	}
	return old
}

// takePrepared removes deployID's prepared process, if any.
func (t *processTable) takePrepared(deployID string) *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	p := t.prepared[deployID]
	delete(t.prepared, deployID)
	return p
}

// takeApp removes every process of the app, active and prepared.
func (t *processTable) takeApp(appID string) []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	var out []*proc
	if p := t.active[appID]; p != nil {
		out = append(out, p)
		delete(t.active, appID)
	}
	for id, p := range t.prepared {
		if p.appID == appID {
			out = append(out, p)
			delete(t.prepared, id)
		}
	}
	return out
}

// takeAll empties the table.
func (t *processTable) takeAll() []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	var out []*proc
	for _, p := range t.active {
		out = append(out, p)
	}
	for _, p := range t.prepared {
		out = append(out, p)
	}
	t.active, t.prepared = map[string]*proc{}, map[string]*proc{}
	return out
}

// takeIdle removes the active minScale-0 processes that no request reached for idleAfter.
func (t *processTable) takeIdle(now time.Time, idleAfter time.Duration) []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	var out []*proc
	for app, p := range t.active {
		if p.minScale == 0 && now.Sub(time.Unix(0, p.lastUsed.Load())) >= idleAfter {
			out = append(out, p)
			delete(t.active, app)
		}
	}
	return out
}

// live is the process appID's traffic goes to, or nil.
func (t *processTable) live(appID string) *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active[appID]
}
