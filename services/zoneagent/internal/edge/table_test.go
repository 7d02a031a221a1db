package edge

import (
	"runtime"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// bytesPerCall is what fn allocates on average over n calls.
func bytesPerCall(n int, fn func(i int)) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		fn(i)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// A deploy, a hostname and a hold each change one app: at 10,000 apps the write copies a
// shard, not the table (a copy of the whole table is over a megabyte).
func TestOneAppsChangeDoesNotCopyTheTable(t *testing.T) {
	table := tableOf(10_000)
	stops := time.Now().Add(time.Hour)
	for name, write := range map[string]func(i int){
		"set": func(i int) {
			table.Set(Route{AppID: "app7", Slug: "s7", DeployID: string(rune('a' + i%26)), Kind: revision.KindStatic})
		},
		"host":  func(i int) { table.SetHost("www.h7.test", []string{"app7", ""}[i%2]) },
		"pause": func(i int) { table.PauseApp("app7", []*time.Time{&stops, nil}[i%2]) },
	} {
		if got := bytesPerCall(200, write); got > 16<<10 {
			t.Errorf("%s: %d bytes a change at 10,000 apps, want a shard's copy (under 16 KB)", name, got)
		}
	}
}

// A hostname recorded before its app's first deploy is served once the app's route is set,
// follows the route, and stops with the app.
func TestAHostnameFollowsItsAppsRoute(t *testing.T) {
	table := NewTable()
	table.SetHost("shop.example", "a1")
	if _, ok := table.LookupHost("shop.example"); ok {
		t.Fatal("a hostname of an app with no route is served")
	}
	if len(table.Hosts()) != 0 {
		t.Fatalf("hosts of no live app: %v", table.Hosts())
	}
	v := table.HostsVersion()
	table.Set(Route{AppID: "a1", Slug: "shop", DeployID: "d1"})
	if r, ok := table.LookupHost("shop.example"); !ok || r.DeployID != "d1" {
		t.Fatalf("after the first deploy: %+v %v", r, ok)
	}
	if table.HostsVersion() == v || len(table.Hosts()) != 1 {
		t.Fatalf("the served hostnames did not change: %v", table.Hosts())
	}
	table.Set(Route{AppID: "a1", Slug: "shop2", DeployID: "d2"})
	if _, ok := table.Lookup("shop"); ok {
		t.Fatal("the app's old slug is still served")
	}
	if r, ok := table.LookupHost("shop.example"); !ok || r.DeployID != "d2" {
		t.Fatalf("after a redeploy: %+v %v", r, ok)
	}
	// Another app takes the slug: the first app's removal leaves it alone.
	table.Set(Route{AppID: "a2", Slug: "shop2", DeployID: "d3"})
	table.RemoveApp("a1")
	if r, ok := table.Lookup("shop2"); !ok || r.AppID != "a2" {
		t.Fatalf("removing an app dropped another's slug: %+v %v", r, ok)
	}
	if _, ok := table.LookupHost("shop.example"); ok {
		t.Fatal("a removed app's hostname is served")
	}
}

// Resend gives the follower the whole table again (a change may have been lost on its way
// to the edge); a mirror that missed changes is in step after it.
func TestResendBringsAFollowerThatMissedChangesInStep(t *testing.T) {
	runtime, mirror := NewTable(), NewTable()
	runtime.Follow(func(c Change) {
		if c.Op != OpSet { // the set below is lost on the way
			mirror.Apply(c)
		}
	})
	runtime.SetHost("shop.example", "a1")
	runtime.Set(Route{AppID: "a1", Slug: "shop", DeployID: "d1"})
	stops := time.Now().Add(-time.Minute)
	runtime.PauseApp("a1", &stops)
	if _, ok := mirror.Lookup("shop"); ok {
		t.Fatal("the lost change arrived")
	}
	runtime.Resend()
	if r, ok := mirror.LookupHost("shop.example"); !ok || r.DeployID != "d1" || !mirror.Paused("a1", time.Now()) {
		t.Fatalf("after Resend: %+v %v, paused %v", r, ok, mirror.Paused("a1", time.Now()))
	}
}
