package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/telemetry"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/store"
)

// keepSent is how long published outbox rows stay for inspection before pruning.
const keepSent = 24 * time.Hour

func run(ctx context.Context) error {
	return serve(ctx, pkgconfig.Environ(), os.Stderr)
}

// serve is the composition root: it connects to Postgres and the broker and serves until ctx
// ends. It returns nil after a clean stop and the first part's error otherwise, so the
// process never limps on with a part of it dead.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	shutdown, err := telemetry.Setup(ctx, "logs", version)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}()
	log := logging.New("logs", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))

	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, store.Service("").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations, callerid.Migrations))
	if err != nil {
		return err
	}
	defer pool.Close()
	// Signed state-changing requests are served once across the replicas (pkg/callerid).
	defer callerid.ShareReplays(callerid.NewSharedNonces(pool))()
	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := store.New(ctx, pool)
	if err != nil {
		return err
	}
	defer st.Close()

	now := time.Now
	partitions := app.NewPartitions(st, log, now, cfg.PartitionsAhead, cfg.MaxRetentionDays)
	// Today's partition exists before the first batch is taken; failing that is failing to
	// start.
	if _, err := partitions.Upkeep(ctx); err != nil {
		return err
	}
	billing := busapi.BillingPlans{Client: billingbus.PlanClient{Bus: conn, Timeout: cfg.PlanLookupTimeout}}
	plans := app.NewPlans(st, billing, log)
	id := health.NewIdentity("logs", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	// Open streams end (with their final event) as the HTTP shutdown starts, or the
	// shutdown would wait for them.
	stopping, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	finder := app.NewAppFinder(st, busapi.AppsLookup{Client: appsbus.AppClient{Bus: conn, Timeout: cfg.AppLookupTimeout}}, log)
	web := httpapi.New(httpapi.Deps{
		Reader:   app.NewReader(finder, st, plans, now),
		Streamer: app.NewStreamer(finder, plans, st, now, cfg.StreamLate),
		Stream: httpapi.StreamLimits{
			Poll: cfg.StreamPoll, Heartbeat: cfg.StreamHeartbeat,
			Idle: cfg.StreamIdle, Lifetime: cfg.StreamLifetime,
		},
		Stopping:   stopping,
		SigningKey: []byte(cfg.SigningKey),
		Identity:   id,
		Log:        log,
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("logs: listen: %w", err)
	}

	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := []bus.Subscription{
		busapi.NewIngest(st, app.NewIngest(st, log, now, partitions.MaxDays)).Subscription(cfg.IngestPrefetch),
		busapi.NewApps(st, now).Subscription(),
		busapi.NewPlans(st, plans, log).Subscription(),
	}
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}

	g, _ := lifecycle.New(ctx)
	for _, sub := range subs {
		g.Go(sub.Queue+" consumer", func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	g.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
	g.Every(log, lifecycle.Job{Name: "partition maintenance", Every: cfg.MaintenanceInterval, Run: partitions.Upkeep})
	g.Every(log, lifecycle.Job{
		Name: "deleted-app cleanup", Every: cfg.CleanupInterval,
		Run: app.NewCleanup(st, log, now, cfg.CleanupBatch).Run,
	})
	// Every ingested batch leaves a processed id, so they are kept for less than the bus's
	// default week (still far past any redelivery).
	g.Every(log, lifecycle.Job{
		Name: "bus housekeeping", Every: cfg.MaintenanceInterval, Immediately: true,
		Run: func(ctx context.Context) (int64, error) {
			return bus.Prune(ctx, pool, keepSent, cfg.ProcessedRetention)
		},
	})
	g.Go("http", func(context.Context) error { return web.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		stopStreams()
		if err := web.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(context.WithoutCancel(ctx), "http shutdown", "err", err.Error())
		}
		return nil
	})
	log.InfoContext(ctx, "logs service started", "addr", ln.Addr().String())
	return g.Wait()
}
