// Command databases is the databases service: one managed Postgres per
// service app, provisioned by its zone, behind the gateway at /api/apps/{slug}/database.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "databases:", err)
		os.Exit(1)
	}
}
