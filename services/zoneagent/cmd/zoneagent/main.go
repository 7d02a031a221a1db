// Command zoneagent is the local zone's agent: it prepares and runs the revisions the
// deploys service sends over the bus, and its edge serves the live apps.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent:", err)
		os.Exit(1)
	}
}
