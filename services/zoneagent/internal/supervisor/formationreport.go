package supervisor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"tori.dev/services/zoneagent/internal/revision"
)

// report tells FormationChanged how many instances of each type of the app's live revision
// run, when that changed since the last report.
func (l *Local) report(appID string) {
	if l.FormationChanged == nil {
		return
	}
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	deployID, running := l.running(appID)
	if deployID == "" {
		return
	}
	var key strings.Builder
	key.WriteString(deployID)
	for _, r := range running {
		fmt.Fprintf(&key, " %s=%d", r.Type, r.Running)
	}
	if l.reported == nil {
		l.reported = map[string]string{}
	}
	if l.reported[appID] == key.String() {
		return
	}
	l.reported[appID] = key.String()
	l.FormationChanged(context.Background(), appID, deployID, running)
}

// running counts the app's live instances per declared type (web first, then by name).
func (l *Local) running(appID string) (string, []revision.ProcessRunning) {
	t := &l.procs
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	a := t.apps[appID]
	if a == nil {
		return "", nil
	}
	counts := map[string]int64{}
	if a.launch != nil {
		for _, pt := range a.launch.processes() {
			counts[pt.Name] = 0
		}
	} else {
		for ptype := range a.formation.Quantities {
			counts[ptype] = 0
		}
	}
	for _, p := range a.web {
		if p.alive() {
			counts[revision.Web]++
		}
	}
	for _, w := range a.workers {
		if w.up() {
			counts[w.ptype]++
		}
	}
	out := make([]revision.ProcessRunning, 0, len(counts))
	for ptype, n := range counts {
		out = append(out, revision.ProcessRunning{Type: ptype, Running: n})
	}
	slices.SortFunc(out, func(x, y revision.ProcessRunning) int {
		if (x.Type == revision.Web) != (y.Type == revision.Web) {
			if x.Type == revision.Web {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Type, y.Type)
	})
	return a.deployID, out
}
