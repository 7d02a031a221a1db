package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"tori.dev/pkg/profiling"
)

// profileReads takes a CPU profile of each service in profiles (name → its profile server)
// while the page is read, into dir/<name>.cpu.pprof; the returned func waits for them. The
// profiles last about as long as the reads do: five paths a round, a little over 1 ms each.
// The gateway's shows its hop alone; the logs service's holds its route, which it serves
// for the gateway's reads and for the direct ones alike.
func profileReads(profiles map[string]string, dir string, samples int) func() error {
	if dir == "" || len(profiles) == 0 {
		return func() error { return nil }
	}
	secs := max(2, samples*11/10*5*11/10/1000)
	errc := make(chan error, len(profiles))
	for name, addr := range profiles {
		go func() {
			errc <- profiling.SaveCPU(addr, secs, filepath.Join(dir, name+".cpu.pprof"))
		}()
	}
	return func() error {
		var errs []error
		for range profiles {
			errs = append(errs, <-errc)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		fmt.Printf("  CPU profiles in %s (go tool pprof -top %s)\n", dir, filepath.Join(dir, "gateway.cpu.pprof"))
		return nil
	}
}
