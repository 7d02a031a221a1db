// Package profiling serves Go's runtime profiles (net/http/pprof) on a loopback address,
// for profiling a service under load. It is off unless PROFILE_ADDR is set.
package profiling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/debug"
	"time"
)

// Config is embedded in a service's configuration.
type Config struct {
	// ProfileAddr, when set, is a loopback host:port serving /debug/pprof/.
	ProfileAddr string `env:"PROFILE_ADDR"`
	// BlockProfileRate is passed to runtime.SetBlockProfileRate and MutexProfileFraction to
	// runtime.SetMutexProfileFraction while profiling is on (0 keeps them off).
	BlockProfileRate     int `env:"PROFILE_BLOCK_RATE, default=0"`
	MutexProfileFraction int `env:"PROFILE_MUTEX_FRACTION, default=0"`
}

// ErrNotLoopback refuses a profile address other than a loopback one: profiles name every
// function and allocation site of the process, which is nobody's business off the machine.
var ErrNotLoopback = errors.New("PROFILE_ADDR must be a loopback address")

// Validate checks the address when one is set.
func (c Config) Validate() error {
	if c.ProfileAddr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.ProfileAddr)
	if err != nil {
		return fmt.Errorf("PROFILE_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ErrNotLoopback
	}
	return nil
}

// Serve runs the profile server until ctx ends; without an address it waits for ctx only.
func Serve(ctx context.Context, c Config, log *slog.Logger) error {
	if c.ProfileAddr == "" {
		<-ctx.Done()
		return nil
	}
	if err := c.Validate(); err != nil {
		return err
	}
	runtime.SetBlockProfileRate(c.BlockProfileRate)
	runtime.SetMutexProfileFraction(c.MutexProfileFraction)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("POST /debug/free-os-memory", freeOSMemory)
	ln, err := net.Listen("tcp", c.ProfileAddr)
	if err != nil {
		return fmt.Errorf("profile listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.InfoContext(ctx, "profiles served", "addr", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("profile server: %w", err)
	}
	return nil
}

// freeOSMemory runs a collection and returns to the OS what the heap no longer holds, so a
// memory reading taken next counts what the process keeps, not a burst's garbage waiting for
// the background scavenger (make bench-scale's memory per napping app).
func freeOSMemory(w http.ResponseWriter, _ *http.Request) {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"heapInuseBytes":%d,"heapIdleBytes":%d,"heapReleasedBytes":%d,"goroutines":%d}`+"\n",
		m.HeapInuse, m.HeapIdle, m.HeapReleased, runtime.NumGoroutine())
}
