package supervisor

import (
	"context"
	"maps"
	"sync"
	"time"

	"tori.dev/contract/names"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

// A service preview (docs/previews.md) runs one web instance of its revision, sandboxed as
// the app's instances are (the app's uid, network namespace and cgroup, the plan's limits),
// apart from the app's formation: it never counts in the app's formation reports and never
// replaces the app's live instances. It naps after IdleAfter without a request whatever the
// plan's minScale, and its next request wakes it. Its output's process is preview.<id>.

var _ usecase.PreviewRunner = (*Local)(nil)

// previewProcs is one preview's revision and its instance (nil while it naps).
type previewProcs struct {
	appID, deployID string
	launch          launcher // nil until needed after an agent restart
	web             *proc
}

// previewTable is every preview's instance, by preview id; each preview also has a lock of
// its own, held while its instance starts or stops.
type previewTable struct {
	mu    sync.Mutex
	byID  map[string]*previewProcs
	locks map[string]chan struct{}
}

func (t *previewTable) lockOf(id string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locks == nil {
		t.locks = map[string]chan struct{}{}
	}
	ch := t.locks[id]
	if ch == nil {
		ch = make(chan struct{}, 1)
		t.locks[id] = ch
	}
	return ch
}

// tryLock takes the preview's lock if nobody holds it.
func (t *previewTable) tryLock(id string) (func(), bool) {
	ch := t.lockOf(id)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	default:
		return nil, false
	}
}

func (t *previewTable) lock(ctx context.Context, id string) (func(), error) {
	ch := t.lockOf(id)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *previewTable) get(id string) *previewProcs {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// swap makes next the preview's (nil: none) and returns the one before it, to stop.
func (t *previewTable) swap(id string, next *previewProcs) *previewProcs {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]*previewProcs{}
	}
	old := t.byID[id]
	if next == nil {
		delete(t.byID, id)
	} else {
		t.byID[id] = next
	}
	return old
}

// find is the running preview instance with that instance id (supervisor.Local.Dial).
func (t *previewTable) find(instance string) *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pp := range t.byID {
		if pp.web != nil && pp.web.alive() && instanceID(pp.web) == instance {
			return pp.web
		}
	}
	return nil
}

// instanceNameOf names an instance as its logs and its cgroup leaf do: web.1, worker.2, or
// preview.<id> for a preview's web instance.
func instanceNameOf(rev revision.Revision, ptype string, n int) string {
	if rev.PreviewID != "" && ptype == revision.Web {
		return names.PreviewProcess(rev.PreviewID)
	}
	return revision.InstanceName(ptype, n)
}

// previewEnv adds TORI_PREVIEW=1 to a preview's variables (its build, release and
// instance): the apps service puts it in the snapshot already, the zone makes sure.
func previewEnv(rev revision.Revision, vars map[string]string) map[string]string {
	if rev.PreviewID == "" {
		return vars
	}
	out := maps.Clone(vars) // the opener's map may be shared
	if out == nil {
		out = map[string]string{}
	}
	out["TORI_PREVIEW"] = "1"
	return out
}

// ActivatePreview makes the prepared revision the preview's: its healthy instance serves at
// once and the preview's previous instance stops. After an agent restart nothing is
// prepared in memory: the instance starts on the first request.
func (l *Local) ActivatePreview(ctx context.Context, rev revision.Revision) error {
	unlock, err := l.previews.lock(ctx, rev.PreviewID)
	if err != nil {
		return err
	}
	defer unlock()
	prep := l.procs.takePrepared(rev.DeployID)
	next := &previewProcs{appID: rev.AppID, deployID: rev.DeployID}
	if cur := l.previews.get(rev.PreviewID); cur != nil && cur.deployID == rev.DeployID {
		next = cur // a repeated activation: a newer prepared instance takes over
	}
	var replaced *proc
	if prep != nil {
		l.previews.mu.Lock()
		next.launch = prep.launch
		if prep.web != nil {
			replaced, next.web = next.web, prep.web
		}
		l.previews.mu.Unlock()
	}
	if old := l.previews.swap(rev.PreviewID, next); old != nil && old != next && old.web != nil {
		old.web.stop()
	}
	if replaced != nil {
		replaced.stop()
	}
	return nil
}

// WakePreview returns the preview's web instance for route (its revision as the runtime's
// own table names it), starting it when it naps; edgelink.ErrGone when a newer revision
// serves the preview, edgelink.ErrNoWeb when the revision declares no web.
func (l *Local) WakePreview(ctx context.Context, route edge.Route) ([]string, error) {
	id := route.PreviewID
	unlock, err := l.previews.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur := l.previews.get(id)
	if cur != nil && cur.deployID > route.DeployID {
		return nil, edgelink.ErrGone
	}
	if cur == nil || cur.deployID != route.DeployID || cur.appID != route.AppID {
		cur = &previewProcs{appID: route.AppID, deployID: route.DeployID}
		if old := l.previews.swap(id, cur); old != nil && old.web != nil {
			old.web.stop()
		}
	}
	l.previews.mu.Lock()
	web, ln := cur.web, cur.launch
	l.previews.mu.Unlock()
	if web != nil && web.alive() {
		web.lastUsed.Store(time.Now().UnixNano())
		return []string{instanceID(web)}, nil
	}
	if ln == nil {
		rev, err := l.loadRevision(ctx, route.DeployID)
		if err != nil {
			return nil, err
		}
		if rev.PreviewID != id || rev.AppID != route.AppID {
			return nil, edgelink.ErrGone
		}
		if err := l.Identities.Ensure(ctx, rev.AppID); err != nil {
			return nil, err
		}
		if ln, err = l.runtimeFor(rev.Kind).launcher(ctx, rev); err != nil {
			return nil, err
		}
	}
	pt, ok := processOf(ln, revision.Web)
	if !ok {
		return nil, edgelink.ErrNoWeb
	}
	p, err := ln.start(ctx, pt, 1)
	if err != nil {
		return nil, err
	}
	l.previews.mu.Lock()
	current := l.previews.byID[id] == cur
	if current {
		cur.web, cur.launch = p, ln
	}
	l.previews.mu.Unlock()
	if !current {
		p.stop() // removed meanwhile
		return nil, edgelink.ErrGone
	}
	appWakes.Inc() // metrics.go
	return []string{instanceID(p)}, nil
}

// StopPreview stops a preview's instance (its files are the usecase's to remove).
func (l *Local) StopPreview(ctx context.Context, appID, previewID string) error {
	unlock, err := l.previews.lock(ctx, previewID)
	if err != nil {
		return err
	}
	defer unlock()
	cur := l.previews.get(previewID)
	if cur == nil || cur.appID != appID {
		return nil
	}
	l.previews.swap(previewID, nil)
	if cur.web != nil {
		cur.web.stop()
	}
	return nil
}

// stopAppPreviews stops every preview instance of an app ("": of every app).
func (l *Local) stopAppPreviews(appID string) {
	t := &l.previews
	t.mu.Lock()
	var stop []*proc
	for id, pp := range t.byID {
		if appID == "" || pp.appID == appID {
			if pp.web != nil {
				stop = append(stop, pp.web)
			}
			delete(t.byID, id)
		}
	}
	t.mu.Unlock()
	for _, p := range stop {
		p.stop()
	}
}

// napPreviews stops the preview instances no request reached for IdleAfter; one being
// started or stopped is looked at next time.
func (l *Local) napPreviews(now time.Time) int {
	t := &l.previews
	t.mu.Lock()
	var idle []string
	for id, pp := range t.byID {
		if pp.web != nil && now.Sub(time.Unix(0, pp.web.lastUsed.Load())) >= l.IdleAfter {
			idle = append(idle, id)
		}
	}
	t.mu.Unlock()
	napped := 0
	for _, id := range idle {
		unlock, ok := t.tryLock(id)
		if !ok {
			continue
		}
		t.mu.Lock()
		pp := t.byID[id]
		var web *proc
		if pp != nil && pp.web != nil && now.Sub(time.Unix(0, pp.web.lastUsed.Load())) >= l.IdleAfter {
			web, pp.web = pp.web, nil
		}
		t.mu.Unlock()
		unlock()
		if web != nil {
			web.stop()
			napped++
		}
	}
	return napped
}
