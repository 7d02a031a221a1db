package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/telemetry"
	appsconfig "tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
	"tori.dev/services/apps/internal/events"
	"tori.dev/services/apps/internal/httpapi"
	"tori.dev/services/apps/internal/store"
)

// Run serves until ctx ends: HTTP, the outbox relay, the consumers, the env responders and
// the hostname checker. Any of them failing stops all of them.
func Run(ctx context.Context, cfg appsconfig.Config, log *slog.Logger, version string) error {
	log.InfoContext(ctx, "starting", "version", version, "config", config.Describe(&cfg))
	stopTracing, err := telemetry.Setup(ctx, "apps", version)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))

	pool, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	kr, err := OpenKeyring(ctx, cfg, st)
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "keyring ready", "keyring", kr.String())

	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		return err
	}
	defer conn.Close()

	svc := NewServices(cfg, st, kr, events.BillingPlans{Bus: conn, Timeout: 3 * time.Second})
	id := health.NewIdentity("apps", version)
	app := httpapi.New(httpapi.Deps{
		Apps: svc.Apps, Env: svc.Env, Domains: svc.Domains, AppsDomain: cfg.AppsDomain,
		SigningKey: []byte(cfg.SigningKey), Health: id, Log: log,
	})
	checker := &domains.Checker{
		Store: st, Resolver: domains.NewResolver(cfg.DNSResolver), Interval: cfg.DomainCheckInterval,
		Log: log, Now: time.Now, Batch: 100,
	}

	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := map[string]bus.Subscription{
		"accounts consumer":  events.AccountsSubscription(log),
		"cleanup consumer":   events.CleanupSubscription(log),
		"revisions consumer": events.RevisionsSubscription(log),
	}
	for name, sub := range subs {
		sub.Ready = id.Await(sub.Queue)
		subs[name] = sub
	}

	// A silently dead consumer would leave slugs held and plans stale: any part stopping
	// early stops the service.
	g, _ := lifecycle.New(ctx)
	g.Go("http", func(context.Context) error { return app.Listen(cfg.Addr) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
			log.Warn("http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("relay", bus.NewRelay(conn, pool, log).Run)
	for name, sub := range subs {
		g.Go(name, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	g.Go("env snapshot responder", func(ctx context.Context) error {
		return conn.Serve(ctx, events.QueueEnvSnapshot, events.EnvSnapshot(svc.Env))
	})
	g.Go("env open responder", func(ctx context.Context) error {
		return conn.Serve(ctx, events.QueueEnvOpen, events.EnvOpen(svc.Env))
	})
	g.Go("domain checker", checker.Run)
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, 0, log) })
	log.InfoContext(ctx, "listening", "addr", cfg.Addr)
	return g.Wait()
}

func openDB(ctx context.Context, cfg appsconfig.Config) (*pgxpool.Pool, error) {
	return pgstore.Setup(ctx, cfg.DatabaseURL, store.Service(cfg.DBPassword), pgstore.WithMigrations(bus.Migrations, store.Migrations))
}

// RotateKeys is `apps rotate-keys`: a new primary key, then every stored value re-sealed
// under it. Old keys stay, so deploy snapshots sealed under them still open.
func RotateKeys(ctx context.Context, cfg appsconfig.Config, out io.Writer) error {
	pool, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	kr, err := OpenKeyring(ctx, cfg, st)
	if err != nil {
		return err
	}
	rep, err := env.RotateKeys(ctx, kr, st)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rotated %s: new primary key %s; re-encrypted %d values\n", kr, rep.Primary, rep.Reencrypted)
	return nil
}
