package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.addr, secs))
		if err != nil {
			errc <- err
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("profile server answered %d: %s", resp.StatusCode, body)
		}
		if err == nil {
			err = os.MkdirAll(p.dir, 0o755)
		}
		if err == nil {
			err = os.WriteFile(file, body, 0o644)
		}
		errc <- err
	}()
	return func() {
		if err := <-errc; err != nil {
			b.Fatalf("profile of the zone agent (%s): %v", file, err)
		}
		fmt.Printf("profile: %s\n", file)
	}
}
