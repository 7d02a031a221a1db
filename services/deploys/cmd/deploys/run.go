package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/deploys/internal/config"
	"tori.dev/services/deploys/internal/events"
	"tori.dev/services/deploys/internal/httpapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/service"
	"tori.dev/services/deploys/internal/store"
)

// run serves until ctx ends, then drains requests within the shutdown timeout.
func run(ctx context.Context) error {
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("deploys", nil)
	log.Info("starting", "version", version, "config", pkgconfig.Describe(&cfg))

	stopTracing, err := telemetry.Setup(ctx, "deploys", version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	pool, err := store.Setup(ctx, cfg.DatabaseURL, cfg.DBPassword)
	if err != nil {
		return err
	}
	defer pool.Close()
	objs, err := objects.NewLocal(cfg.ObjectsDir())
	if err != nil {
		return err
	}
	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		return err
	}
	defer conn.Close()

	svc := service.New(service.Deps{
		Store: store.New(pool), Objects: objs, Plans: events.BillingPlans{Conn: conn},
		Env: events.NewAppsEnv(conn), Log: log,
	})
	id := health.NewIdentity("deploys", version)
	app := httpapi.New(httpapi.Deps{Deploys: svc, SigningKey: []byte(cfg.SigningKey), Health: id, Log: log})
	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := events.Subscriptions(svc)
	for i := range subs {
		subs[i].Ready = id.Await(subs[i].Queue)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}

	g, _ := lifecycle.New(ctx)
	g.Go("http server", func(context.Context) error { return app.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := app.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.Warn("http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	for _, sub := range subs {
		g.Go(sub.Queue, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, time.Hour, log) })
	g.Go("sweeper", func(ctx context.Context) error { sweepLoop(ctx, svc, cfg, log); return nil })
	log.Info("listening", "addr", ln.Addr().String())

	err = g.Wait()
	log.Info("stopped", "err", err)
	return err
}

// sweepLoop closes overdue deploys, cleans deleted apps and removes unreferenced artifacts.
// Failures are logged and retried on the next tick.
func sweepLoop(ctx context.Context, svc *service.Service, cfg config.Config, log *slog.Logger) {
	t := time.NewTicker(cfg.SweepEvery)
	defer t.Stop()
	for {
		if n, err := svc.CloseOverdue(ctx); err != nil {
			log.WarnContext(ctx, "close overdue deploys", "err", err.Error())
		} else if n > 0 {
			log.InfoContext(ctx, "closed overdue deploys", "count", n)
		}
		if n, err := svc.CleanDeletedApps(ctx); err != nil {
			log.WarnContext(ctx, "clean deleted apps", "err", err.Error())
		} else if n > 0 {
			log.InfoContext(ctx, "cleaned deleted apps", "count", n)
		}
		if n, err := svc.SweepArtifacts(ctx, cfg.ArtifactGrace); err != nil {
			log.WarnContext(ctx, "sweep artifacts", "err", err.Error())
		} else if n > 0 {
			log.InfoContext(ctx, "swept unreferenced artifacts", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
