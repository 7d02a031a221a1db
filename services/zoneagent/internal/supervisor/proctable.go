package supervisor

import (
	"context"
	"slices"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// appProcs are the instances of an app's live revision. Its fields change under the table's
// lock only.
type appProcs struct {
	deployID  string
	minScale  int64
	formation revision.Formation
	// launch starts the revision's instances; nil until one is needed after an agent restart.
	launch launcher
	// webUp: web instances should run. False while the app naps, and after an agent restart
	// until its first request.
	webUp   bool
	web     map[int]*proc
	workers map[string]*worker // by instance name
}

func newAppProcs(deployID string, minScale int64, f revision.Formation) *appProcs {
	return &appProcs{deployID: deployID, minScale: minScale, formation: f, web: map[int]*proc{}, workers: map[string]*worker{}}
}

// preparedRev is a prepared revision waiting for activation: its healthy web instance (nil
// when it declares no web) and what starts the rest.
type preparedRev struct {
	appID  string
	web    *proc
	launch launcher
}

// processTable is every instance Local keeps: each app's live revision's, and the prepared
// revisions' web instances waiting for activation. Its take methods remove instances from
// the table; the caller stops them, outside the lock. Each app also has a lock of its own,
// held while its instances are started or stopped, so that changes to one app (activation,
// scaling, waking) happen one at a time.
type processTable struct {
	mu       sync.Mutex
	apps     map[string]*appProcs
	prepared map[string]*preparedRev // by deploy
	locks    map[string]chan struct{}
}

// init makes the maps; called with mu held.
func (t *processTable) init() {
	if t.apps == nil {
		t.apps, t.prepared, t.locks = map[string]*appProcs{}, map[string]*preparedRev{}, map[string]chan struct{}{}
	}
}

// lock takes the app's lock, or gives up when ctx ends; the returned func releases it.
func (t *processTable) lock(ctx context.Context, appID string) (func(), error) {
	ch := t.lockOf(appID)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tryLock takes the app's lock if nobody holds it.
func (t *processTable) tryLock(appID string) (func(), bool) {
	ch := t.lockOf(appID)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	default:
		return nil, false
	}
}

func (t *processTable) lockOf(appID string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	ch := t.locks[appID]
	if ch == nil {
		ch = make(chan struct{}, 1)
		t.locks[appID] = ch
	}
	return ch
}

// keepPrepared holds a prepared revision until the control plane activates or discards it;
// one left by an earlier attempt of the same deploy is handed back, to stop.
func (t *processTable) keepPrepared(deployID string, p *preparedRev) (old *preparedRev) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	old = t.prepared[deployID]
	t.prepared[deployID] = p
	return old
}

// takePrepared removes deployID's prepared revision, if any.
func (t *processTable) takePrepared(deployID string) *preparedRev {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	p := t.prepared[deployID]
	delete(t.prepared, deployID)
	return p
}

// swap makes next the app's live instances and returns the ones before it, to stop.
func (t *processTable) swap(appID string, next *appProcs) (old *appProcs) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	old = t.apps[appID]
	if next == nil {
		delete(t.apps, appID)
	} else {
		t.apps[appID] = next
	}
	return old
}

// app is the app's live instances, or nil; read or change its fields under mu.
func (t *processTable) app(appID string) *appProcs {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	return t.apps[appID]
}

// takeApp removes the app's live instances and its prepared revisions.
func (t *processTable) takeApp(appID string) (*appProcs, []*preparedRev) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	a := t.apps[appID]
	delete(t.apps, appID)
	var prepared []*preparedRev
	for id, p := range t.prepared {
		if p.appID == appID {
			prepared = append(prepared, p)
			delete(t.prepared, id)
		}
	}
	return a, prepared
}

// takeAll empties the table.
func (t *processTable) takeAll() ([]*appProcs, []*preparedRev) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	var apps []*appProcs
	for _, a := range t.apps {
		apps = append(apps, a)
	}
	var prepared []*preparedRev
	for _, p := range t.prepared {
		prepared = append(prepared, p)
	}
	t.apps, t.prepared = map[string]*appProcs{}, map[string]*preparedRev{}
	return apps, prepared
}

// idleApps are the minScale-0 apps whose web instances run and none of which a request
// reached for idleAfter.
func (t *processTable) idleApps(now time.Time, idleAfter time.Duration) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	var out []string
	for id, a := range t.apps {
		if a.idle(now, idleAfter) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// idle: a minScale-0 app whose web is up and none of whose web instances a request reached
// for idleAfter (t.mu held).
func (a *appProcs) idle(now time.Time, idleAfter time.Duration) bool {
	if a.minScale != 0 || !a.webUp || a.formation.Quantity(revision.Web) == 0 {
		return false
	}
	last := int64(0)
	for _, p := range a.web {
		last = max(last, p.lastUsed.Load())
	}
	return now.Sub(time.Unix(0, last)) >= idleAfter
}

// takeIdleWeb removes the app's web instances and marks its web down (napping), if the app
// is still idle; ok says it was. idleApps listed it a while ago, and a wake may have started
// an instance since (the app was listed while that wake ran, its web up and no instance in
// it yet): stopped here, it ended under the very request that woke it, the visitor's 502.
// A wake in flight holds the app's lock, so the nap does not come here then (tryLock); one
// finished since left an instance used just now.
func (t *processTable) takeIdleWeb(appID string, now time.Time, idleAfter time.Duration) (web []*proc, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	a := t.apps[appID]
	if a == nil || !a.idle(now, idleAfter) {
		return nil, false
	}
	out := webInOrder(a)
	a.web, a.webUp = map[int]*proc{}, false
	return out, true
}

// liveWeb is the app's running web instances of deployID, by number.
func (t *processTable) liveWeb(appID, deployID string) []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	a := t.apps[appID]
	if a == nil || a.deployID != deployID || !a.webUp {
		return nil
	}
	var out []*proc
	for _, p := range webInOrder(a) {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// webInOrder is a's web instances by number; called with mu held.
func webInOrder(a *appProcs) []*proc {
	ns := make([]int, 0, len(a.web))
	for n := range a.web {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	out := make([]*proc, 0, len(ns))
	for _, n := range ns {
		out = append(out, a.web[n])
	}
	return out
}

// moves is what brings the instance numbers have to want instances numbered 1..want: the
// numbers to start (lowest first) and to stop (highest first).
func moves(have []int, want int64) (start, stop []int) {
	present := map[int]bool{}
	for _, n := range have {
		present[n] = true
		if int64(n) > want {
			stop = append(stop, n)
		}
	}
	for n := 1; int64(n) <= want; n++ {
		if !present[n] {
			start = append(start, n)
		}
	}
	slices.Sort(stop)
	slices.Reverse(stop)
	return start, stop
}
