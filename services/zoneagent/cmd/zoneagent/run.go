package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/zoneagent/internal/agent"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/events"
	"tori.dev/services/zoneagent/internal/store"
)

// run serves until ctx ends.
func run(ctx context.Context) error {
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("zoneagent", nil).With("zone", cfg.Zone)
	log.Info("starting", "version", version, "config", pkgconfig.Describe(&cfg))
	stopTracing, err := telemetry.Setup(ctx, "zoneagent", version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	pool, err := store.Setup(ctx, cfg.DatabaseURL, cfg.Zone, cfg.DBPassword)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		return err
	}
	defer conn.Close()

	table := edge.NewTable()
	runner, err := newRunner(ctx, cfg, conn, pool, log)
	if err != nil {
		return err
	}
	a := &agent.Agent{
		Zone: cfg.Zone, Store: store.New(pool), ObjectsDir: cfg.Objects(), SitesDir: filepath.Join(cfg.DataDir, "sites"),
		Table: table, Runner: runner, Log: log,
	}
	a.Init()

	healthApp := fiber.New(fiber.Config{AppName: "zoneagent", DisableStartupMessage: true})
	id := health.NewIdentity("zoneagent", version)
	healthApp.Get("/healthz", id.Handler)
	healthApp.Get("/readyz", id.ReadyHandler)
	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := events.Subscriptions(a)
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}
	healthLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	edgeLn, err := net.Listen("tcp", cfg.EdgeAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.EdgeAddr, err)
	}
	edgeSrv := &http.Server{
		Handler:           &edge.Edge{Domain: cfg.AppsDomain, SitesDir: a.SitesDir, Table: table, Services: runner},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}

	g, _ := lifecycle.New(ctx)
	g.Go("health server", func(context.Context) error { return healthApp.Listener(healthLn) })
	g.Go("edge", func(context.Context) error {
		if err := edgeSrv.Serve(edgeLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if err := errors.Join(healthApp.ShutdownWithContext(sctx), edgeSrv.Shutdown(sctx)); err != nil {
			log.Warn("http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	for _, sub := range subs {
		g.Go(sub.Queue, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("agent", a.Run)
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, time.Hour, log) })
	g.Go("process supervisor", func(ctx context.Context) error { runner.Run(ctx); return nil })
	log.Info("listening", "health", healthLn.Addr().String(), "edge", edgeLn.Addr().String())
	err = g.Wait()
	runner.StopAll()
	log.Info("stopped", "err", err)
	return err
}
