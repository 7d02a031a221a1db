// Command logs-bench measures the logs service on real Postgres and RabbitMQ:
//
//  1. the ingest rate through the bus: log batches published from an outbox by a relay,
//     consumed and stored by the logs service binary (built from this workspace unless -bin
//     names it) run as a process;
//  2. with the control plane running as processes (identity, billing, apps, logs, gateway,
//     built from this workspace unless -bin names them) and 10 million entries seeded by
//     COPY across 200 apps and 7 days, the latency of a 500-entry read of the busiest hour of
//     a customer's app through the gateway, next to the same statement as plain SQL, and the
//     logs service's own route (signed as the gateway signs) for the service's share, and
//     the floor (floor.go): the page's bytes from a bare server and through a bare relay;
//  3. with -drains alone (drains.go, make bench-drains): one app's lines at 5,000/s through
//     the bus with and without an HTTPS drain, alternating: the drain's delivered rate and
//     lag, and GET /logs p99 either way.
//
// It works in a database of its own, created on the given server and dropped at the end;
// the services it starts are stopped before that.
// Not part of `make test`: run it by hand (see the README of services/logs).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	adminURL      string
	amqpURL       string
	queueType     string
	ingestEntries int
	batchSize     int
	seedEntries   int
	apps          int
	days          int
	samples       int
	binDir        string
	profileDir    string
	limit         int
	keep          bool
	drains        bool
	drainRate     int
	drainPhase    time.Duration
	drainRounds   int
	drainSeed     int
}

func main() {
	if helper, err := runFloorRole(); helper {
		if err != nil {
			fmt.Fprintln(os.Stderr, "logs-bench floor:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.adminURL, "postgres", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "admin URL of the Postgres server; a scratch database is made on it")
	flag.StringVar(&o.amqpURL, "amqp", envOr("TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"), "RabbitMQ URL")
	flag.StringVar(&o.queueType, "queue-type", "quorum", "queue type of the ingest queue (production uses quorum)")
	flag.IntVar(&o.ingestEntries, "ingest-entries", 500_000, "entries sent through the bus; 0 skips the ingest run")
	flag.IntVar(&o.batchSize, "batch", 500, "entries per bus message")
	flag.IntVar(&o.seedEntries, "seed-entries", 10_000_000, "entries seeded with COPY for the read run; 0 skips it")
	flag.IntVar(&o.apps, "apps", 200, "apps the seeded entries spread over")
	flag.IntVar(&o.days, "days", 7, "days the seeded entries spread over")
	// 500 plus the warm-up of a tenth stays under the gateway's 600 reads a minute of one
	// account; more is allowed, the reads over the limit wait for the next minute.
	flag.IntVar(&o.samples, "samples", 500, "reads measured per path, after a warm-up of a tenth as many")
	flag.StringVar(&o.binDir, "bin", "", "folder with the identity, billing, apps, logs and gateway binaries (e.g. ../../bin after scripts/build.sh); empty builds them from this workspace")
	flag.IntVar(&o.limit, "limit", 500, "entries per read")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database")
	flag.StringVar(&o.profileDir, "profile", "", "folder for CPU profiles of the gateway and the logs service taken while the page is read (their PROFILE_ADDR); empty: none")
	flag.BoolVar(&o.drains, "drains", false, "run the drain bench alone (make bench-drains): a drain at -drain-rate entries/s, and GET /logs p99 with and without it")
	flag.IntVar(&o.drainRate, "drain-rate", 5000, "entries/s of one app during each drain phase")
	flag.DurationVar(&o.drainPhase, "drain-phase", 15*time.Second, "length of each phase (without, then with the drain)")
	flag.IntVar(&o.drainRounds, "drain-rounds", 3, "rounds of the two phases; figures are their medians")
	flag.IntVar(&o.drainSeed, "drain-seed", 200_000, "entries seeded in the hour the route reads")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "logs-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	db, err := newScratch(ctx, o.adminURL, o.keep)
	if err != nil {
		return err
	}
	defer db.drop()
	if o.drains {
		return benchDrains(ctx, db, o)
	}
	if o.ingestEntries > 0 {
		if err := benchIngest(ctx, db, o); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	if o.seedEntries > 0 {
		if err := benchRead(ctx, db, o); err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
	return nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
