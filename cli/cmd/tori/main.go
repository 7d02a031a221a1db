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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := commands.Main(ctx, commands.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv:      os.Getenv,
		OpenBrowser: commands.SystemBrowser(os.Getenv),
	}, os.Args[1:])
	stop()
	os.Exit(code)
}
