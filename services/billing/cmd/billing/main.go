// Command billing is Tori's billing service: the plan catalog, each account's plan, and the
// account's billing. `billing` (or `billing serve`) runs the service; `billing set-plan` is
// the operator command that moves an account to another plan.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "billing:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return serve(ctx)
	}
	switch args[0] {
	case "serve":
		return serve(ctx)
	case "set-plan":
		return setPlan(ctx, args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

const usage = `usage:
  billing [serve]                                   run the service
  billing set-plan -account <id|email> -plan <nestling|songbird|flock> [-timeout 30s]
                                                    move an account to a plan (operators only)
`
