// Package service wires the logs service together and runs it: the store, the bus
// consumers, the outbox relay, the partition upkeep, the deleted apps' cleanup and the HTTP
// routes. cmd/logs and the benchmark both start it through Run.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/cleanup"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/events"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/plans"
	"tori.dev/services/logs/internal/retention"
	"tori.dev/services/logs/internal/store"
)

// keepSent is how long published outbox rows stay for inspection before pruning.
const keepSent = 24 * time.Hour

// Run connects to Postgres and the broker and serves until ctx ends. It returns nil after a
// clean shutdown and the first component's error otherwise, so the process never limps on
// with a part of it dead.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, version string) error {
	pool, err := pgstore.Setup(ctx, cfg.DatabaseURL, store.Service(cfg.DBPassword), pgstore.WithMigrations(bus.Migrations, store.Migrations))
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := bus.Dial(ctx, cfg.Bus, log)
	if err != nil {
		return err
	}
	defer conn.Close()

	now := time.Now
	st, err := store.New(ctx, pool)
	if err != nil {
		return err
	}
	defer st.Close()
	maint := retention.New(st, log, now, cfg.PartitionsAhead, cfg.MaxRetentionDays)
	// Today's partition exists before the first batch is taken; failing that is failing to
	// start.
	if err := maint.RunOnce(ctx); err != nil {
		return err
	}
	planSource := plans.NewSource(st, conn, cfg.PlanLookupTimeout, cfg.DefaultRetentionDays, log)
	id := health.NewIdentity("logs", version)
	app := httpapi.New(httpapi.Deps{
		Reader:     logs.NewReader(st, st, planSource, now),
		SigningKey: []byte(cfg.SigningKey),
		Identity:   id,
		Log:        log,
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("logs: listen: %w", err)
	}

	ingest := events.NewIngester(st, log, now, maint.MaxDays)
	apps := events.NewApps(st, log, now)
	planEvents := events.NewPlans(st, log)
	cleaner := cleanup.New(st, log, now, cfg.CleanupBatch)

	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := map[string]bus.Subscription{
		"ingest consumer": ingest.Subscription(cfg.IngestPrefetch),
		"apps consumer":   apps.Subscription(),
		"plans consumer":  planEvents.Subscription(),
	}
	for name, sub := range subs {
		sub.Ready = id.Await(sub.Queue)
		subs[name] = sub
	}

	g, _ := lifecycle.New(ctx)
	for name, sub := range subs {
		g.Go(name, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	g.Go("partition maintenance", func(ctx context.Context) error { return maint.Run(ctx, cfg.MaintenanceInterval) })
	g.Go("deleted-app cleanup", func(ctx context.Context) error { return cleaner.Run(ctx, cfg.CleanupInterval) })
	// Every ingested batch leaves a processed id, so they are kept for less than the bus's
	// default week (still far past any redelivery).
	g.Go("bus housekeeping", func(ctx context.Context) error {
		return bus.HousekeepKeeping(ctx, pool, cfg.MaintenanceInterval, bus.Retention{Sent: keepSent, Processed: cfg.ProcessedRetention}, log)
	})
	g.Go("http", func(context.Context) error { return app.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
			log.Warn("http shutdown", "err", err.Error())
		}
		return nil
	})
	log.InfoContext(ctx, "logs service started", "addr", ln.Addr().String())
	return g.Wait()
}
