package supervisor

import (
	"slices"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// fakeProc is a web instance of the table's tests: stopping it closes exited and counts.
func fakeProc(appID, deployID string, n int, lastUsed time.Time) (*proc, *int) {
	stops := 0
	p := &proc{appID: appID, deployID: deployID, ptype: revision.Web, n: n, exited: make(chan struct{})}
	p.cancel = func() { stops++; close(p.exited) }
	p.lastUsed.Store(lastUsed.UnixNano())
	return p, &stops
}

// Bringing instances numbered have to want: the missing lowest numbers start, the highest
// stop first, a gap left by an exit is filled.
func TestMoves(t *testing.T) {
	for _, tc := range []struct {
		name        string
		have        []int
		want        int64
		start, stop []int
	}{
		{"from nothing", nil, 3, []int{1, 2, 3}, nil},
		{"nothing to do", []int{1, 2}, 2, nil, nil},
		{"scale down stops the highest first", []int{1, 2, 3, 4}, 2, nil, []int{4, 3}},
		{"to zero", []int{2, 1}, 0, nil, []int{2, 1}},
		{"a gap is filled", []int{1, 3}, 3, []int{2}, nil},
		{"a gap and a stop", []int{1, 3}, 1, nil, []int{3}},
		{"up from one", []int{1}, 3, []int{2, 3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, stop := moves(tc.have, tc.want)
			if !slices.Equal(start, tc.start) || !slices.Equal(stop, tc.stop) {
				t.Fatalf("moves(%v, %d) = start %v stop %v, want %v %v", tc.have, tc.want, start, stop, tc.start, tc.stop)
			}
		})
	}
}

// Restarts: at once, then 1 s doubling up to 5 minutes; ten minutes up starts over.
func TestBackoff(t *testing.T) {
	var b backoff
	short := time.Second
	for i, want := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		if got := b.next(short); got != want {
			t.Fatalf("exit %d: %s, want %s", i+1, got, want)
		}
	}
	if got := b.next(9 * time.Minute); got != 5*time.Minute {
		t.Fatalf("nine minutes up does not reset: %s", got)
	}
	if got := b.next(10 * time.Minute); got != 0 {
		t.Fatalf("after ten minutes up: %s, want at once", got)
	}
	if got := b.next(short); got != time.Second {
		t.Fatalf("the exit after a reset: %s, want 1s", got)
	}
}

// A formation with no quantities (a command from before formations) runs one web.
func TestFormationDefaultsToOneWeb(t *testing.T) {
	for _, tc := range []struct {
		f     revision.Formation
		ptype string
		want  int64
	}{
		{revision.Formation{}, "web", 1},
		{revision.Formation{}, "worker", 0},
		{revision.Formation{Quantities: map[string]int64{"worker": 2}}, "web", 0},
		{revision.Formation{Quantities: map[string]int64{"worker": 2}}, "worker", 2},
		{revision.Formation{Quantities: map[string]int64{"web": -1}}, "web", 0},
	} {
		if got := tc.f.Quantity(tc.ptype); got != tc.want {
			t.Errorf("%v %s: %d, want %d", tc.f.Quantities, tc.ptype, got, tc.want)
		}
	}
}

// A retry's prepared revision hands back the earlier attempt's; a swap hands back the app's
// instances before it; napping takes only idle minScale-0 apps' web instances; an app's
// deletion takes its live and prepared instances and nobody else's.
func TestProcessTableMoves(t *testing.T) {
	var tbl processTable
	now := time.Now()
	first, _ := fakeProc("a", "d1", 1, now)
	retry, _ := fakeProc("a", "d1", 1, now)
	if old := tbl.keepPrepared("d1", &preparedRev{appID: "a", web: first}); old != nil {
		t.Fatalf("nothing was prepared before: %v", old)
	}
	if old := tbl.keepPrepared("d1", &preparedRev{appID: "a", web: retry}); old == nil || old.web != first {
		t.Fatalf("the earlier attempt was not handed back: %v", old)
	}
	live := newAppProcs("d1", 0, revision.Formation{})
	live.web[1], live.webUp = tbl.takePrepared("d1").web, true
	if old := tbl.swap("a", live); old != nil {
		t.Fatalf("first activation handed back %v", old)
	}
	if got := tbl.liveWeb("a", "d1"); len(got) != 1 || got[0] != retry {
		t.Fatalf("live web %v", got)
	}
	if got := tbl.liveWeb("a", "d0"); got != nil {
		t.Fatalf("another revision's web: %v", got)
	}

	busy, _ := fakeProc("busy", "d-busy", 1, now.Add(-10*time.Second))
	kept, _ := fakeProc("kept", "d-kept", 1, now.Add(-time.Hour))
	idle2, _ := fakeProc("a", "d1", 2, now.Add(-2*time.Minute))
	retry.lastUsed.Store(now.Add(-3 * time.Minute).UnixNano())
	live.web[2] = idle2
	for _, p := range []*proc{busy, kept} {
		a := newAppProcs(p.deployID, 0, revision.Formation{})
		if p == kept {
			a.minScale = 1
		}
		a.web[1], a.webUp = p, true
		tbl.swap(p.appID, a)
	}
	if got := tbl.idleApps(now, time.Minute); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("idle apps %v", got)
	}
	if got, ok := tbl.takeIdleWeb("a", now, time.Minute); !ok || len(got) != 2 || got[0] != retry || got[1] != idle2 || live.webUp || len(live.web) != 0 {
		t.Fatalf("napping took %v, webUp %v", got, live.webUp)
	}
	if got := tbl.idleApps(now, time.Minute); len(got) != 0 {
		t.Fatalf("a napping app is idle again: %v", got)
	}

	waiting, _ := fakeProc("busy", "d-busy-2", 1, now)
	tbl.keepPrepared("d-busy-2", &preparedRev{appID: "busy", web: waiting})
	a, prepared := tbl.takeApp("busy")
	if a == nil || a.web[1] != busy || len(prepared) != 1 || prepared[0].web != waiting {
		t.Fatalf("the deleted app's instances: %v %v", a, prepared)
	}
	apps, prepared := tbl.takeAll()
	if len(apps) != 2 || len(prepared) != 0 || len(tbl.apps) != 0 {
		t.Fatalf("all: %d apps, %d prepared", len(apps), len(prepared))
	}
}

// The nap lists idle apps first and stops them one by one after. An app listed while a wake
// of it ran (its web up, no instance in it yet) and woken by the time the nap reaches it
// keeps the instance its request is being answered by; one still idle then naps.
func TestNapSparesAnAppWokenSinceItWasListed(t *testing.T) {
	now := time.Now()
	var tbl processTable
	waking := newAppProcs("d-waking", 0, revision.Formation{})
	waking.webUp = true // the wake marks the web up before its instance starts
	tbl.swap("waking", waking)
	still := newAppProcs("d-still", 0, revision.Formation{})
	idle, stops := fakeProc("still", "d-still", 1, now.Add(-2*time.Minute))
	still.web[1], still.webUp = idle, true
	tbl.swap("still", still)

	if got := tbl.idleApps(now, time.Minute); !slices.Equal(got, []string{"still", "waking"}) {
		t.Fatalf("idle apps %v", got)
	}
	woken, wokenStops := fakeProc("waking", "d-waking", 1, now.Add(time.Second))
	waking.web[1] = woken // the wake finished; its request is on the way to the instance

	if got, ok := tbl.takeIdleWeb("waking", now, time.Minute); ok || got != nil {
		t.Fatalf("the nap took the woken app's instances %v", got)
	}
	if !waking.webUp || waking.web[1] != woken || *wokenStops != 0 {
		t.Fatalf("the woken app lost its web: up %v, instances %v", waking.webUp, waking.web)
	}
	if got, ok := tbl.takeIdleWeb("still", now, time.Minute); !ok || len(got) != 1 || got[0] != idle || still.webUp {
		t.Fatalf("the idle app did not nap: took %v, ok %v, up %v (stops %d)", got, ok, still.webUp, *stops)
	}
}
