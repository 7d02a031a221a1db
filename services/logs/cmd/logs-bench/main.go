// Command logs-bench measures the logs service on real Postgres and RabbitMQ:
//
//  1. the ingest rate through the bus: log batches published from an outbox by a relay,
//     consumed and stored by a logs service running in this process;
//  2. with 10 million entries seeded by COPY across 200 apps and 7 days, the latency of a
//     500-entry read of the busiest app's busiest hour through the service's HTTP route
//     (signed as the gateway would sign it) next to the same statement as plain SQL.
//
// It works in a database of its own, created on the given server and dropped at the end.
// Not part of `make test`: run it by hand (see the README of services/logs).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
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
	limit         int
	keep          bool
}

func main() {
	var o options
	flag.StringVar(&o.adminURL, "postgres", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "admin URL of the Postgres server; a scratch database is made on it")
	flag.StringVar(&o.amqpURL, "amqp", envOr("TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"), "RabbitMQ URL")
	flag.StringVar(&o.queueType, "queue-type", "quorum", "queue type of the ingest queue (production uses quorum)")
	flag.IntVar(&o.ingestEntries, "ingest-entries", 500_000, "entries sent through the bus; 0 skips the ingest run")
	flag.IntVar(&o.batchSize, "batch", 500, "entries per bus message")
	flag.IntVar(&o.seedEntries, "seed-entries", 10_000_000, "entries seeded with COPY for the read run; 0 skips it")
	flag.IntVar(&o.apps, "apps", 200, "apps the seeded entries spread over")
	flag.IntVar(&o.days, "days", 7, "days the seeded entries spread over")
	flag.IntVar(&o.samples, "samples", 300, "reads measured per path")
	flag.IntVar(&o.limit, "limit", 500, "entries per read")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database")
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
