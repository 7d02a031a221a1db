// Package service wires the logs service together and runs it: the store, the bus
// consumers, the outbox relay, the partition upkeep, the deleted apps' cleanup and the HTTP
// routes. cmd/logs and the benchmark both start it through Run.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/health"
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
	pool, err := pgstore.Setup(ctx, cfg.DatabaseURL, store.Service(cfg.DBPassword), bus.Migrations, store.Migrations)
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
	app := httpapi.New(httpapi.Deps{
		Reader:     logs.NewReader(st, st, planSource, now),
		SigningKey: []byte(cfg.SigningKey),
		Identity:   health.NewIdentity("logs", version),
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

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return conn.Consume(gctx, pool, ingest.Subscription(cfg.IngestPrefetch)) })
	g.Go(func() error { return conn.Consume(gctx, pool, apps.Subscription()) })
	g.Go(func() error { return conn.Consume(gctx, pool, planEvents.Subscription()) })
	g.Go(func() error { return bus.NewRelay(conn, pool, log).Run(gctx) })
	g.Go(func() error { return maint.Run(gctx, cfg.MaintenanceInterval) })
	g.Go(func() error { return cleaner.Run(gctx, cfg.CleanupInterval) })
	g.Go(func() error { return prune(gctx, pool, log, cfg.MaintenanceInterval, cfg.ProcessedRetention) })
	g.Go(func() error { return app.Listener(ln) })
	g.Go(func() error {
		<-gctx.Done()
		return app.ShutdownWithTimeout(10 * time.Second)
	})
	log.InfoContext(ctx, "logs service started", "addr", ln.Addr().String())

	err = g.Wait()
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return nil
	}
	if err == nil {
		err = errors.New("logs: a component stopped")
	}
	return err
}

// prune keeps the bus's bookkeeping from growing without bound: every ingested batch leaves
// a processed-message record.
func prune(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, every, keepProcessed time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if n, err := bus.Prune(ctx, pool, keepSent, keepProcessed); err != nil && ctx.Err() == nil {
				log.ErrorContext(ctx, "bus prune failed", "err", err.Error())
			} else if n > 0 {
				log.InfoContext(ctx, "bus records pruned", "rows", n)
			}
		}
	}
}
