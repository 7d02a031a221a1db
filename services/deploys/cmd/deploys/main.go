// Command deploys is Tori's deploys service: deploys, artifacts, release jobs and
// environment snapshots, and the state machine that takes a deploy live on its zone.
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
		fmt.Println(buildinfo.Line("deploys"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploys:", err)
		os.Exit(1)
	}
}
