package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/telemetry"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/databases/internal/app"
	"tori.dev/services/databases/internal/busapi"
	"tori.dev/services/databases/internal/config"
	"tori.dev/services/databases/internal/httpapi"
	"tori.dev/services/databases/internal/objects"
	"tori.dev/services/databases/internal/store"
)

// clock is the service's time; tests move it (the 24 hours of a rotated-out password).
var clock = time.Now

func run(ctx context.Context) error {
	return serve(ctx, pkgconfig.Environ(), os.Stderr)
}

// serve is the composition root: it connects to Postgres and the broker and serves until ctx
// ends. It returns nil after a clean stop and the first part's error otherwise.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	shutdown, err := telemetry.Setup(ctx, "databases", version)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}()
	log := logging.New("databases", logs)
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

	st := store.New(pool)
	dbs := app.NewDatabases(st,
		busapi.AppsLookup{Client: appsbus.AppClient{Bus: conn, Timeout: cfg.AppLookupTimeout}},
		busapi.BillingPlans{Client: billingbus.PlanClient{Bus: conn, Timeout: cfg.PlanLookupTimeout}},
		objects.Store{Root: filepath.Join(cfg.DataDir, "objects")},
		clock, log)
	dbs.DumpHour = cfg.DumpHour
	id := health.NewIdentity("databases", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	web := httpapi.New(httpapi.Deps{Databases: dbs, SigningKey: []byte(cfg.SigningKey), Identity: id, Log: log})
	// Registered before /readyz is served, so it is never ready with the consumer unbound.
	subs := []bus.Subscription{busapi.ZoneReports(st, dbs), busapi.AppDeletions(st, dbs), busapi.PlanChanges(st, dbs), busapi.Deploys(st, dbs)}
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("databases: listen: %w", err)
	}

	g, _ := lifecycle.New(ctx)
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	for _, sub := range subs {
		g.Go(sub.Queue+" consumer", func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, 0, log) })
	g.Every(log, lifecycle.Job{Name: "nightly dumps", Every: cfg.DumpCheckInterval, Run: dbs.NightlyDumps})
	g.Every(log, lifecycle.Job{Name: "rotation expiry", Every: cfg.RotationCheckInterval, Run: dbs.ExpireRotations})
	g.Go("http", func(context.Context) error { return web.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := web.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(context.WithoutCancel(ctx), "http shutdown", "err", err.Error())
		}
		return nil
	})
	log.InfoContext(ctx, "databases service started", "addr", ln.Addr().String())
	return g.Wait()
}
