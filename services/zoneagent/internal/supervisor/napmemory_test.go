package supervisor

import (
	"fmt"
	goruntime "runtime"
	"testing"

	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// What the runtime keeps for a napping service: its entry in the process table (no
// instance), its lock, its output bound and the launcher that starts it on the next
// request, with its environment (here 20 variables). A few KB: no goroutine, no buffer.
func TestANappingAppCostsTheRuntimeAFewKB(t *testing.T) {
	const apps = 10_000
	src := &SourceRuntime{}
	out := &Output{LinesPerSecond: 100}
	var table processTable
	heap := func() uint64 {
		var m goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	g0, h0 := goruntime.NumGoroutine(), heap()
	for i := range apps {
		appID, deployID := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), fmt.Sprintf("%08d-0000-7000-8000-000000000000", i)
		vars := make(map[string]string, 20)
		for v := range 20 {
			vars[fmt.Sprintf("VAR_%d", v)] = fmt.Sprintf("value-%d-of-app-%d", v, i)
		}
		rev := revision.Revision{DeployID: deployID, AppID: appID, Slug: fmt.Sprint("s", i), Kind: revision.KindSource}
		a := newAppProcs(deployID, 0, revision.Formation{Quantities: map[string]int64{revision.Web: 1}})
		a.launch = src.newLaunch(rev, "/apps/"+appID+"/"+deployID, buildplan.Plan{Start: "node server.js"}, Manifest{}, vars, NewRedactor(vars))
		table.swap(appID, a)
		table.lockOf(appID)
		out.bound(appID)
	}
	perApp := int64(heap()-h0) / apps
	goruntime.KeepAlive(&table)
	goruntime.KeepAlive(out)
	t.Logf("a napping app in the runtime: %d B (goroutines %d -> %d)", perApp, g0, goruntime.NumGoroutine())
	if goruntime.NumGoroutine() > g0 {
		t.Fatalf("napping apps hold %d goroutines", goruntime.NumGoroutine()-g0)
	}
	if perApp > 8<<10 {
		t.Fatalf("a napping app holds %d B of the runtime's heap, want at most 8 KB", perApp)
	}
}
