package supervisor

import (
	"slices"
	"testing"
	"time"
)

// fakeProc is a process of the table's tests: stopping it closes exited and counts.
func fakeProc(appID, deployID string, minScale int64, lastUsed time.Time) (*proc, *int) {
	stops := 0
	p := &proc{appID: appID, deployID: deployID, minScale: minScale, exited: make(chan struct{})}
	p.cancel = func() { stops++; close(p.exited) }
	p.lastUsed.Store(lastUsed.UnixNano())
	return p, &stops
}

func deployIDs(ps []*proc) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.deployID)
	}
	slices.Sort(out)
	return out
}

// A retry's process replaces (and stops) the earlier attempt's; activation hands back the
// process it replaces, and an activation with nothing prepared leaves the app without one.
func TestProcessTablePrepareAndActivate(t *testing.T) {
	var tbl processTable
	now := time.Now()
	first, firstStops := fakeProc("a", "d1", 1, now)
	retry, _ := fakeProc("a", "d1", 1, now)
	tbl.keepPrepared(first)
	tbl.keepPrepared(retry)
	if *firstStops != 1 || tbl.prepared["d1"] != retry {
		t.Fatalf("the earlier attempt: stopped %d times, prepared %v", *firstStops, tbl.prepared["d1"])
	}
	if old := tbl.activate("a", "d1"); old != nil || tbl.active["a"] != retry || len(tbl.prepared) != 0 {
		t.Fatalf("first activation: old %v, active %v", old, tbl.active["a"])
	}
	next, _ := fakeProc("a", "d2", 1, now)
	tbl.keepPrepared(next)
	if old := tbl.activate("a", "d2"); old != retry || tbl.active["a"] != next {
		t.Fatalf("second activation: old %v, active %v", old, tbl.active["a"])
	}
	if old := tbl.activate("a", "d3"); old != next || tbl.active["a"] != nil {
		t.Fatalf("an activation after a restart: old %v, active %v", old, tbl.active["a"])
	}
}

// Napping takes only minScale-0 processes idle for long enough; an app's deletion takes its
// active and prepared processes and nobody else's.
func TestProcessTableTakesIdleAndAppProcesses(t *testing.T) {
	var tbl processTable
	now := time.Now()
	idle, _ := fakeProc("idle", "d-idle", 0, now.Add(-2*time.Minute))
	busy, _ := fakeProc("busy", "d-busy", 0, now.Add(-10*time.Second))
	kept, _ := fakeProc("kept", "d-kept", 1, now.Add(-time.Hour))
	for _, p := range []*proc{idle, busy, kept} {
		tbl.keepPrepared(p)
		tbl.activate(p.appID, p.deployID)
	}
	if got := deployIDs(tbl.takeIdle(now, time.Minute)); !slices.Equal(got, []string{"d-idle"}) || tbl.active["idle"] != nil {
		t.Fatalf("napped %v", got)
	}
	waiting, _ := fakeProc("busy", "d-busy-2", 1, now)
	other, _ := fakeProc("kept", "d-kept-2", 1, now)
	tbl.keepPrepared(waiting)
	tbl.keepPrepared(other)
	if got := deployIDs(tbl.takeApp("busy")); !slices.Equal(got, []string{"d-busy", "d-busy-2"}) {
		t.Fatalf("the deleted app's processes: %v", got)
	}
	if got := deployIDs(tbl.takeAll()); !slices.Equal(got, []string{"d-kept", "d-kept-2"}) || len(tbl.active)+len(tbl.prepared) != 0 {
		t.Fatalf("all: %v", got)
	}
}
