// Command identity runs Tori's identity service: accounts, sign-in, sessions, command-line
// grants and API tokens. Configuration is by environment (internal/config).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/server"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "identity:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	shutdown, err := telemetry.Setup(ctx, "identity", version)
	if err != nil {
		return err
	}
	defer shutdown(context.WithoutCancel(ctx))
	srv, err := server.New(ctx, cfg, logging.New("identity", nil), version)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
