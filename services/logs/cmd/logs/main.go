// Command logs is the logs service: it stores the zones' log lines and serves
// GET /api/apps/{slug}/logs behind the gateway.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/service"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "logs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("logs", nil)
	shutdown, err := telemetry.Setup(ctx, "logs", version)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}()
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))
	return service.Run(ctx, cfg, log, version)
}
