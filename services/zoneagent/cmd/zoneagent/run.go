package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/metrics"
	"tori.dev/pkg/telemetry"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	runnerpkg "tori.dev/services/zoneagent/internal/runner"
	"tori.dev/services/zoneagent/internal/store"
)

// run serves with the process's environment and logs to stderr.
func run(ctx context.Context) error { return serve(ctx, pkgconfig.Environ(), os.Stderr) }

// housekeepEvery is how often the zone prunes its outbox and processed-message ids.
const housekeepEvery = time.Hour

// serve is the composition root: it runs the zone until ctx ends, then stops the edge and the
// health server (in-flight requests finish within the shutdown timeout), the bus work and
// every customer process.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	log := logging.New("zoneagent", logs).With("zone", cfg.Zone)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))
	stopTracing, err := telemetry.Setup(ctx, "zoneagent", version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	pool, err := store.Connect(ctx, cfg.DatabaseURL, cfg.Zone)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return err
	}
	defer conn.Close()

	st := store.New(pool)
	table := edge.NewTable()
	logBatches := busapi.NewLogs(st, log)
	runner, err := newRunner(ctx, cfg, st, busapi.EnvOpener{Conn: conn}, logBatches, log)
	if err != nil {
		return err
	}
	runnerpkg.RegisterUsage(runner.AppsDir, runner.Disks, runner.Sandbox.Cgroups) // /metrics
	sites := filepath.Join(cfg.DataDir, "sites")
	agent, err := app.New(app.Deps{
		Zone: cfg.Zone, Store: st, ObjectsDir: cfg.Objects(), SitesDir: sites, Table: table, Runner: runner, Log: log,
	})
	if err != nil {
		return err
	}

	dbs, pooler, err := managedDatabases(cfg, st, log)
	if err != nil {
		return err
	}
	var capsJob lifecycle.Job
	capsOK, removeCaps := false, func() {}
	if pooler != nil {
		if capsJob, removeCaps, capsOK, err = poolerClientCaps(cfg, st, pooler, log); err != nil {
			return err
		}
	}

	healthApp := fiber.New(fiber.Config{AppName: "zoneagent", DisableStartupMessage: true,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute})
	id := health.NewIdentity("zoneagent", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	healthApp.Use(metrics.Fiber())
	healthApp.Get("/healthz", id.Handler)
	healthApp.Get("/readyz", readyz(id, runner.Sandbox.Unavailable))
	healthApp.Get("/metrics", metrics.Handler())
	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := append(busapi.Subscriptions(agent), busapi.DatabaseSubscription(cfg.Zone, dbs))
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}
	healthLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	edges, err := listenEdge(cfg, pool, &edge.Edge{Domain: cfg.AppsDomain, SitesDir: sites, Table: table, Services: runner}, log)
	if err != nil {
		healthLn.Close()
		return err
	}

	g, _ := lifecycle.New(ctx)
	g.Go("health server", func(context.Context) error { return healthApp.Listener(healthLn) })
	g.Go("edge", edges.Serve)
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if err := errors.Join(healthApp.ShutdownWithContext(sctx), edges.Shutdown(sctx)); err != nil {
			log.WarnContext(sctx, "http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	if pooler != nil {
		g.Go("pooler", pooler.Run)
		// A pooler that does not come up stops the zone, naming it; a database command taken
		// before it answers fails and is retried by the bus.
		g.Every(log, lifecycle.Job{Name: "database sizes", Every: cfg.SizeCheckInterval, Run: dbs.CheckSizes})
		g.Every(log, statementWatchdog(cfg))
		if capsOK {
			g.Every(log, capsJob)
			g.Go("pooler client caps removal", func(ctx context.Context) error {
				<-ctx.Done()
				removeCaps()
				return nil
			})
		}
		g.Go("pooler start", func(ctx context.Context) error {
			if err := awaitPooler(ctx, pooler); err != nil {
				return err
			}
			<-ctx.Done()
			return nil
		})
	}
	g.Go("database credentials", func(ctx context.Context) error {
		// Only the apps service, which writes DATABASE_URL, learns a database's password.
		return conn.Serve(ctx, zonebus.DatabaseCredentialsQueue(cfg.Zone), bus.OnlyFrom(bus.Is(bus.PrincipalApps), busapi.DatabaseCredentials(dbs)))
	})
	for _, sub := range subs {
		g.Go(sub.Queue, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("agent", agent.Run)
	g.Every(log, agent.PollJob())
	g.Go("log batches", logBatches.Run)
	g.Every(log, runner.NapJob())
	// Keeps the outbox and processed-message tables from growing without end.
	g.Every(log, lifecycle.Job{
		Name: "bus housekeeping", Every: housekeepEvery, Immediately: true,
		Run: func(ctx context.Context) (int64, error) {
			return bus.Prune(ctx, pool, bus.DefaultKeepSent, bus.DefaultKeepProcessed)
		},
	})
	log.InfoContext(ctx, "listening", "health", healthLn.Addr().String(), "edge", edges.Addrs())
	err = g.Wait()
	// After the group: the edge no longer wakes a process that would then be orphaned.
	runner.StopAll()
	log.InfoContext(context.WithoutCancel(ctx), "stopped", "err", err)
	return err
}
