package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/profiling"
	"tori.dev/tests/e2e/harness"
)

// wakeProfile, with SCALE_BENCH_PROFILE_DIR set, watches the one-at-a-time wakes of
// measureEdge: a CPU profile of the zone agent over them (<dir>/zone-wakes-<apps>-<n>.cpu.pprof),
// and, when they end, the host's busy share and the processes that used its CPU meanwhile
// (scalebench_hostwatch_test.go), with the slowest wakes and their places in the sequence.
// A wake is mostly other processes' time (bwrap, pasta, the app's runtime), so the agent's
// profile alone would not say where a slow one went. Without the variable it does nothing.
type wakeProfile struct {
	host *hostWatch
	errc chan error
	file string
}

func startWakeProfile(b *testing.B, s *harness.Stack, w *scaleWorld) *wakeProfile {
	b.Helper()
	dir := os.Getenv("SCALE_BENCH_PROFILE_DIR")
	if dir == "" {
		return nil
	}
	w.wakeProfiles++
	p := &wakeProfile{host: watchHost(), errc: make(chan error, 1),
		file: filepath.Join(dir, fmt.Sprintf("zone-wakes-%d-%d.cpu.pprof", len(w.apps), w.wakeProfiles))}
	go func() { p.errc <- profiling.SaveCPU(s.Env["ZONE_AGENT_PROFILE_ADDR"], 20, p.file) }()
	return p
}

func (p *wakeProfile) finish(b *testing.B, wakes []time.Duration) {
	b.Helper()
	if p == nil {
		return
	}
	order := make([]int, len(wakes))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return wakes[order[i]] > wakes[order[j]] })
	var slow []string
	for _, i := range order[:min(5, len(order))] {
		slow = append(slow, fmt.Sprintf("#%d %s", i, wakes[i].Round(time.Millisecond)))
	}
	b.Logf("wakes: %d; slowest %s; in %s", len(wakes), strings.Join(slow, ", "), p.host.summary())
	if err := <-p.errc; err != nil {
		b.Logf("profile of the zone agent over the wakes (%s): %v", p.file, err)
	}
}
