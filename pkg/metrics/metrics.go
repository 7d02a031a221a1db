// Package metrics is how a process shows Prometheus what it does: the families every
// process shares (HTTP requests here, the bus's in pkg/bus) and the /metrics answer. Each
// package declares its own families on the default registry, which also carries the Go
// runtime's (go_*) and the process's (process_*). Names follow Prometheus' conventions: a
// tori_ prefix, base units (_seconds, _bytes) and _total on counters. Labels hold only
// bounded values (route templates, queue names, outcomes), never a path, an id or a secret.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTPHandler answers a scrape in Prometheus' text format.
func HTTPHandler() http.Handler { return promhttp.Handler() }

// Handler is HTTPHandler for a Fiber app: `app.Get("/metrics", metrics.Handler())` on a
// process's health address, which only operators reach.
func Handler() fiber.Handler { return adaptor.HTTPHandler(HTTPHandler()) }

// Serve answers GET /metrics on addr until ctx ends: for the gateway, whose health answers
// on its public port, so its metrics live on an address of their own. Without an address it
// waits for ctx only.
func Serve(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		<-ctx.Done()
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", HTTPHandler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.InfoContext(ctx, "metrics served", "addr", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
