// Command gateway is Tori's edge: the public API's single entrance.
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
		fmt.Println(buildinfo.Line("gateway"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, nil, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}
