// Command zoneagent is the local zone's agent: it prepares and runs the revisions the
// deploys service sends over the bus, and its edge serves the live apps.
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
	// The binary is also the zone's edge process (edgeprocess.go: it never returns then).
	runEdgeIfAsked()
	// Or the zone's database host, the agent's child (dbhostmain.go).
	runDatabaseHost()
	if buildinfo.Asked(os.Args[1:]) {
		fmt.Println(buildinfo.Line("zoneagent"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serve(ctx, nil, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent:", err)
		os.Exit(1)
	}
}
