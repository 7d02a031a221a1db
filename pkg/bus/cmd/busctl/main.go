// Command busctl is the operator's tool for the bus. It reads the bus configuration from the
// environment like a service does (OPERATOR_AMQP_URL, BUS_NAMESPACE, ...).
//
//	busctl replay [-max N]   move up to N dead-lettered messages back to their queues
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/config"
	"tori.dev/pkg/logging"
)

type cliConfig struct {
	// URL is the operator's broker user, which bin/bootstrap writes to
	// DATA_DIR/secrets/operator.env: replaying reads the dead-letter queue, which no
	// service's user may, and puts each message back as its original publisher, which only
	// a user with the impersonator tag may.
	URL string `env:"OPERATOR_AMQP_URL, required"`
	Bus bus.Config
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "busctl:", err)
		os.Exit(1)
	}
}

const usage = `usage: busctl <command> [flags]

commands:
  replay [-max N]   move up to N (default 100) dead-lettered messages back to their queues

The bus is configured from the environment: OPERATOR_AMQP_URL (DATA_DIR/secrets/operator.env),
BUS_NAMESPACE, ...`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "replay":
		return replay(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	max := fs.Int("max", 100, "most messages to move")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg cliConfig
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("busctl", stderr)
	conn, err := bus.Dial(ctx, cfg.Bus.WithURL(cfg.URL), log)
	if err != nil {
		return err
	}
	defer conn.Close()
	n, err := conn.ReplayDeadLetters(ctx, *max)
	fmt.Fprintf(stdout, "replayed %d message(s)\n", n)
	return err
}
