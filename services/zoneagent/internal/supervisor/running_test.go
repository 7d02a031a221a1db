package supervisor

import (
	"testing"

	"tori.dev/services/zoneagent/internal/revision"
)

// Containers are not listed (no cgroup the zone can read), nor an instance that exited or a
// worker between restarts; the listing takes the table's lock and each worker's apart.
func TestRunningLeavesOutWhatCannotBeSampled(t *testing.T) {
	exited := make(chan struct{})
	close(exited)
	container := &proc{appID: "a", ptype: "web", n: 1, exited: make(chan struct{})} // sandbox nil: a container
	gone := &proc{appID: "a", ptype: "web", n: 2, exited: exited}
	var l Local
	l.procs.init()
	a := newAppProcs("d1", 1, revision.Formation{})
	a.web[1], a.web[2] = container, gone
	a.workers["worker.1"] = &worker{ptype: "worker", n: 1}
	l.procs.apps["a"] = a
	if got := l.Running(); len(got) != 0 {
		t.Fatalf("listed %v", got)
	}
}
