package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/profiling"
)

// edgeProfiler takes a CPU profile of the zone agent (its profile server at addr) while one
// of Tori's wrk runs lasts; with no dir it does nothing.
type edgeProfiler struct{ dir, addr string }

// start begins a profile as long as the run (duration, a wrk -d value) and returns what waits
// for it and writes dir/<name>.cpu.pprof.
func (p edgeProfiler) start(b *testing.B, name, duration string) func() {
	b.Helper()
	if p.dir == "" {
		return nil
	}
	d, err := time.ParseDuration(duration)
	if err != nil {
		b.Fatalf("EDGE_BENCH_DURATION=%q: %v", duration, err)
	}
	// The profile stops a little before wrk does, so it holds load only.
	secs := max(1, int(d.Seconds())-1)
	file := filepath.Join(p.dir, strings.ReplaceAll(name, " ", "-")+".cpu.pprof")
	errc := make(chan error, 1)
	go func() { errc <- profiling.SaveCPU(p.addr, secs, file) }()
	return func() {
		if err := <-errc; err != nil {
			b.Fatalf("profile of the zone agent (%s): %v", file, err)
		}
		fmt.Printf("profile: %s\n", file)
	}
}
