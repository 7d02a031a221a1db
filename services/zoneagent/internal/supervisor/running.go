package supervisor

import "tori.dev/services/zoneagent/internal/sandbox"

// RunningInstance is one running sandboxed instance of an app's live revision, for the
// customer's CPU and memory metrics (internal/instancemetrics).
type RunningInstance struct {
	AppID string
	// Process names the instance as its output does in the app's log (the sandbox's
	// instance: web.1, worker.2).
	Process string
	Sandbox *sandbox.Sandboxed
}

// Running lists the running instances of every app's live revision: web and every other
// type. Containers (image revisions) are left out: the image runtime's CLI shows no cgroup
// the zone could read (README "Metrics").
func (l *Local) Running() []RunningInstance {
	var procs []*proc
	var workers []*worker
	l.procs.mu.Lock()
	for _, a := range l.procs.apps {
		for _, p := range a.web {
			procs = append(procs, p)
		}
		for _, w := range a.workers {
			workers = append(workers, w)
		}
	}
	l.procs.mu.Unlock()
	for _, w := range workers { // outside the table's lock: a worker's is its own
		w.mu.Lock()
		if w.cur != nil {
			procs = append(procs, w.cur)
		}
		w.mu.Unlock()
	}
	var out []RunningInstance
	for _, p := range procs {
		if p.sandbox == nil || !p.alive() {
			continue
		}
		name := p.sandbox.Instance()
		if name == "" {
			name = p.name()
		}
		out = append(out, RunningInstance{AppID: p.appID, Process: name, Sandbox: p.sandbox})
	}
	return out
}
