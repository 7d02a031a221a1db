// Command tori is Tori's command line.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"tori.dev/cli/internal/commands"
)

func main() {
	// Ctrl-C (or SIGTERM) cancels ctx: the command stops what it waits on and exits 130.
	// Once it has, the default is back, so a second Ctrl-C ends tori at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := commands.Main(ctx, commands.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv:      os.Getenv,
		OpenBrowser: commands.SystemBrowser(os.Getenv),
	}, os.Args[1:])
	stop()
	os.Exit(code)
}
