// Command apps is the apps service: app lifecycle, encrypted environment variables and
// custom hostnames. `apps rotate-keys` rotates the environment keyring and re-encrypts every
// stored value, then exits.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	appsconfig "tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/server"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "apps:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var cfg appsconfig.Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		return server.Run(ctx, cfg, logging.New("apps", nil), version)
	case len(args) == 1 && args[0] == "rotate-keys":
		return server.RotateKeys(ctx, cfg, os.Stdout)
	}
	return fmt.Errorf("usage: apps [rotate-keys]")
}
