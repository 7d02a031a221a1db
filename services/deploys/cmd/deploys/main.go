// Command deploys is Tori's deploys service: deploys, artifacts, release jobs and
// environment snapshots, and the state machine that takes a deploy live on its zone.
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
		fmt.Fprintln(os.Stderr, "deploys:", err)
		os.Exit(1)
	}
}
