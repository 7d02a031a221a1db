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
	"tori.dev/pkg/telemetry"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	"tori.dev/services/deploys/internal/app"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/config"
	"tori.dev/services/deploys/internal/httpapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
)

// run serves with the process's own environment and logs to stderr.
func run(ctx context.Context) error {
	return serve(ctx, pkgconfig.Environ(), os.Stderr)
}

// serve is the one composition root: it serves until ctx ends, then drains requests within
// the shutdown timeout. Tests run it in-process with an environment of their own.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	log := logging.New("deploys", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))

	stopTracing, err := telemetry.Setup(ctx, "deploys", version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	pool, err := store.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	// Signed state-changing requests are served once across the replicas (pkg/callerid).
	defer callerid.ShareReplays(callerid.NewSharedNonces(pool))()
	objs, err := objects.NewLocal(cfg.ObjectsDir())
	if err != nil {
		return err
	}
	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return err
	}
	defer conn.Close()

	registries, err := cfg.Registries() // validated at load; the error cannot happen here
	if err != nil {
		return err
	}
	svc := app.New(app.Deps{
		Registries: registries,
		Store:      store.New(pool), Objects: objs, Plans: busapi.BillingPlans{Client: billingbus.PlanClient{Bus: conn}},
		Env: busapi.NewAppsEnv(conn), Apps: busapi.AppsLookup{Client: appsbus.AppClient{Bus: conn, Timeout: cfg.AppLookupTimeout}}, Log: log,
	})
	id := health.NewIdentity("deploys", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	web := httpapi.New(httpapi.Deps{Deploys: svc, SigningKey: []byte(cfg.SigningKey), Health: id, Log: log})
	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := busapi.Subscriptions(svc, store.Bind)
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}

	g, _ := lifecycle.New(ctx)
	g.Go("http server", func(context.Context) error { return web.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := web.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(ctx, "http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	for _, sub := range subs {
		g.Go(sub.Queue, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("hosting responder", func(ctx context.Context) error {
		return conn.Serve(ctx, deploysbus.QueueHosting, bus.OnlyFrom(bus.Is(bus.PrincipalApps), busapi.Hosting(svc)))
	})
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, time.Hour, log) })
	for _, job := range sweepJobs(svc, cfg) {
		g.Every(log, job)
	}
	log.InfoContext(ctx, "listening", "addr", ln.Addr().String())

	err = g.Wait()
	log.InfoContext(context.WithoutCancel(ctx), "stopped", "err", err)
	return err
}

// sweepJobs close overdue deploys, clean deleted apps, remove unreferenced artifacts and
// redeploy running services after a plan change, each
// on its own every DEPLOYS_SWEEP_EVERY and once at start, so a restart catches up at once.
func sweepJobs(svc *app.Service, cfg config.Config) []lifecycle.Job {
	return []lifecycle.Job{
		{Name: "close overdue deploys", Every: cfg.SweepEvery, Immediately: true, Run: svc.CloseOverdue},
		{Name: "clean deleted apps", Every: cfg.SweepEvery, Immediately: true, Run: svc.CleanDeletedApps},
		{Name: "sweep unreferenced artifacts", Every: cfg.SweepEvery, Immediately: true, Run: func(ctx context.Context) (int64, error) {
			return svc.SweepArtifacts(ctx, cfg.ArtifactGrace)
		}},
		{Name: "redeploy for plan changes", Every: cfg.SweepEvery, Immediately: true, Run: svc.RedeployForPlans},
		{Name: "mark reclaimable artifacts", Every: cfg.SweepEvery, Immediately: true, Run: svc.MarkReclaimable},
	}
}
