// Command logs is the logs service: it stores the zones' log lines and serves
// GET /api/apps/{slug}/logs behind the gateway.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"tori.dev/pkg/buildinfo"
)

// version is what scripts/build.sh stamps into pkg/buildinfo (scripts/ldflags.sh).
var version = buildinfo.Version

func main() {
	if buildinfo.Asked(os.Args[1:]) {
		fmt.Println(buildinfo.Line("logs"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "logs:", err)
		os.Exit(1)
	}
}
