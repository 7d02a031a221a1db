package supervisor

import (
	"context"
	"fmt"

	"tori.dev/services/zoneagent/internal/revision"
)

// Activate makes the prepared revision the app's: its healthy web instance becomes web.1,
// the rest of the formation (more web instances, every other type) starts in the
// background, and the previous revision's instances stop. After an agent restart nothing is
// prepared in memory; web then starts on the first request, the other types at once. A
// repeated activation of the live revision only takes a newer formation.
func (l *Local) Activate(ctx context.Context, rev revision.Revision, _ string, f revision.Formation) error {
	unlock, err := l.procs.lock(ctx, rev.AppID)
	if err != nil {
		return err
	}
	defer unlock()
	t := &l.procs
	if cur := t.app(rev.AppID); cur != nil && cur.deployID == rev.DeployID {
		// A retry of the live deploy prepared it again: its healthy instance is web.1 now
		// (a container's retry took the earlier one's name over).
		prep := t.takePrepared(rev.DeployID)
		var replaced *proc
		t.mu.Lock()
		if f.Newer(cur.formation) {
			cur.formation = f
		}
		if prep != nil && prep.web != nil {
			replaced = cur.web[1]
			cur.web[1], cur.webUp, cur.launch = prep.web, true, prep.launch
		}
		t.mu.Unlock()
		if replaced != nil && replaced != prep.web {
			replaced.stop()
		}
		go l.converge(rev.AppID)
		return nil
	}
	next := newAppProcs(rev.DeployID, rev.MinScale, f)
	if prep := t.takePrepared(rev.DeployID); prep != nil {
		next.launch = prep.launch
		if prep.web != nil {
			next.web[1], next.webUp = prep.web, true
		}
	}
	if old := t.swap(rev.AppID, next); old != nil {
		stopInstancesGracefully(old)
	}
	go l.converge(rev.AppID)
	return nil
}

// Scale runs formation f for the app's live revision deployID: instances start or stop (the
// highest numbers first) until each type runs its quantity. A formation for another
// revision, or not newer than the one running, changes nothing. After an agent restart the
// app may have nothing running yet: the formation is taken, and web still waits for the
// first request.
func (l *Local) Scale(ctx context.Context, appID, deployID string, f revision.Formation) error {
	unlock, err := l.procs.lock(ctx, appID)
	if err != nil {
		return err
	}
	defer unlock()
	t := &l.procs
	a := t.app(appID)
	if a == nil {
		rev, err := l.loadRevision(ctx, deployID)
		if err != nil {
			return err
		}
		a = newAppProcs(deployID, rev.MinScale, revision.Formation{})
		t.swap(appID, a)
	}
	t.mu.Lock()
	apply := a.deployID == deployID && f.Newer(a.formation)
	if apply {
		a.formation = f
	}
	t.mu.Unlock()
	if !apply {
		return nil
	}
	return l.convergeLocked(ctx, appID)
}

// RecoverFormations starts, at agent start, the instances of live revisions that always run:
// every type but web (web starts on the first request, as after a nap).
func (l *Local) RecoverFormations(ctx context.Context, live []revision.Route) {
	for _, r := range live {
		if r.Kind.Static() {
			continue
		}
		f := l.formationOf(ctx, r.DeployID)
		workers := false
		for ptype, q := range f.Quantities {
			workers = workers || (ptype != revision.Web && q > 0)
		}
		if !workers {
			continue
		}
		go func() {
			if err := l.Scale(ctx, r.AppID, r.DeployID, f); err != nil && ctx.Err() == nil {
				l.logger().WarnContext(ctx, "bring a live revision's workers back", "deploy", r.DeployID, "err", err.Error())
			}
		}()
	}
}

// converge brings the app's instances to its formation, holding its lock.
func (l *Local) converge(appID string) {
	ctx := context.Background()
	unlock, _ := l.procs.lock(ctx, appID)
	defer unlock()
	if err := l.convergeLocked(ctx, appID); err != nil {
		l.logger().WarnContext(ctx, "start an app's formation", "app", appID, "err", err.Error())
	}
}

// convergeLocked is converge for a caller that holds the app's lock.
func (l *Local) convergeLocked(ctx context.Context, appID string) error {
	t := &l.procs
	a := t.app(appID)
	if a == nil {
		return nil
	}
	defer l.report(appID)
	t.mu.Lock()
	ln, needed := a.launch, a.webUp || len(a.web) > 0 || len(a.workers) > 0
	for ptype, q := range a.formation.Quantities {
		needed = needed || (ptype != revision.Web && q > 0)
	}
	t.mu.Unlock()
	if !needed {
		return nil
	}
	if ln == nil {
		var err error
		if ln, err = l.launchOf(ctx, a); err != nil {
			return err
		}
	}
	declared := map[string]bool{}
	for _, pt := range ln.processes() {
		declared[pt.Name] = true
		if pt.Name == revision.Web {
			l.convergeWeb(ctx, appID, a, ln, pt)
		} else {
			l.convergeWorkers(appID, a, ln, pt)
		}
	}
	// Workers of a type the revision does not declare (none should exist) stop.
	t.mu.Lock()
	var stray []*worker
	for name, w := range a.workers {
		if !declared[w.ptype] {
			stray = append(stray, w)
			delete(a.workers, name)
		}
	}
	t.mu.Unlock()
	for _, w := range stray {
		w.stop()
	}
	return nil
}

// convergeWeb starts and stops a's web instances; one that exited counts as missing. Each
// new one starts on a PORT of its own and joins once healthy.
func (l *Local) convergeWeb(ctx context.Context, appID string, a *appProcs, ln launcher, pt revision.Process) {
	t := &l.procs
	t.mu.Lock()
	want := a.formation.Quantity(revision.Web)
	if !a.webUp {
		want = 0
	}
	var have []int
	var gone []*proc
	for n, p := range a.web {
		if p.alive() {
			have = append(have, n)
		} else {
			gone = append(gone, p)
			delete(a.web, n)
		}
	}
	start, stop := moves(have, want)
	var stopping []*proc
	for _, n := range stop {
		stopping = append(stopping, a.web[n])
		delete(a.web, n)
	}
	t.mu.Unlock()
	for _, p := range append(stopping, gone...) {
		p.stop()
	}
	for _, n := range start {
		p, err := ln.start(ctx, pt, n)
		if err != nil {
			name := revision.InstanceName(pt.Name, n)
			l.systemLine(appID, a.deployID, name, fmt.Sprintf("%s could not start: %v", name, err))
			continue
		}
		t.mu.Lock()
		keep := t.apps[appID] == a && a.webUp
		if keep {
			a.web[n] = p
		}
		t.mu.Unlock()
		if !keep {
			p.stop()
		}
		l.report(appID)
	}
}

// convergeWorkers starts and stops the supervised instances of one type other than web.
func (l *Local) convergeWorkers(appID string, a *appProcs, ln launcher, pt revision.Process) {
	t := &l.procs
	t.mu.Lock()
	want := a.formation.Quantity(pt.Name)
	var have []int
	for _, w := range a.workers {
		if w.ptype == pt.Name {
			have = append(have, w.n)
		}
	}
	if t.apps[appID] != a {
		want = 0 // the app was deleted or its revision replaced meanwhile: start nothing more
	}
	start, stop := moves(have, want)
	var stopping []*worker
	for _, n := range stop {
		name := revision.InstanceName(pt.Name, n)
		stopping = append(stopping, a.workers[name])
		delete(a.workers, name)
	}
	var started []*worker
	for _, n := range start {
		w := l.startWorker(appID, a.deployID, ln, pt, n)
		a.workers[w.name()] = w
		started = append(started, w)
	}
	t.mu.Unlock()
	if len(stopping) > 0 {
		// Their grace period runs in the background; the count is reported once they end.
		go func() {
			stopWorkersGracefully(stopping)
			l.report(appID)
		}()
	}
	for _, w := range started {
		<-w.first // so that the caller's report counts it
	}
}

// launchOf is what starts a's instances: read back from the revision's record and tree
// (after an agent restart) and kept.
func (l *Local) launchOf(ctx context.Context, a *appProcs) (launcher, error) {
	rev, err := l.loadRevision(ctx, a.deployID)
	if err != nil {
		return nil, err
	}
	if err := l.Identities.Ensure(ctx, rev.AppID); err != nil {
		return nil, err
	}
	ln, err := l.runtimeFor(rev.Kind).launcher(ctx, rev)
	if err != nil {
		return nil, err
	}
	l.procs.mu.Lock()
	a.launch = ln
	l.procs.mu.Unlock()
	return ln, nil
}

func (l *Local) loadRevision(ctx context.Context, deployID string) (revision.Revision, error) {
	if l.Revision == nil {
		return revision.Revision{}, fmt.Errorf("no revision source")
	}
	return l.Revision(ctx, deployID)
}

// formationOf is the formation on record for a revision; one web when none is.
func (l *Local) formationOf(ctx context.Context, deployID string) revision.Formation {
	if l.Formation == nil {
		return revision.Formation{}
	}
	f, err := l.Formation(ctx, deployID)
	if err != nil {
		l.logger().WarnContext(ctx, "read a revision's formation; running one web", "deploy", deployID, "err", err.Error())
		return revision.Formation{}
	}
	return f
}

// stopInstances stops every instance of a (taken out of the table).
func stopInstances(a *appProcs) {
	for _, p := range a.web {
		p.stop()
	}
	for _, w := range a.workers {
		w.stop()
	}
}

// stopInstancesGracefully stops a replaced revision's instances: web at once (the edge has
// moved to the new revision), the others with SIGTERM and their grace period, together and
// in the background, so the activation does not wait for them.
func stopInstancesGracefully(a *appProcs) {
	for _, p := range a.web {
		p.stop()
	}
	workers := make([]*worker, 0, len(a.workers))
	for _, w := range a.workers {
		workers = append(workers, w)
	}
	go stopWorkersGracefully(workers)
}
