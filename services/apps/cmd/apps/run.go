package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/buildinfo"
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
	"tori.dev/services/apps/internal/app"
	"tori.dev/services/apps/internal/busapi"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/httpapi"
	"tori.dev/services/apps/internal/store"
)

// version is what scripts/build.sh stamps into pkg/buildinfo (scripts/ldflags.sh).
var version = buildinfo.Version

// planTimeout bounds one question to billing, so a create never waits the bus's whole
// request timeout before answering 503.
const planTimeout = 3 * time.Second

// run serves, or runs the one subcommand, with the process's own environment.
func run(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return serve(ctx, pkgconfig.Environ(), os.Stderr)
	case len(args) == 1 && args[0] == "rotate-keys":
		return rotateKeys(ctx, pkgconfig.Environ(), os.Stdout)
	}
	return fmt.Errorf("usage: apps [rotate-keys]")
}

// serve is the composition root: it runs HTTP, the outbox relay, the consumers, the env
// responders, the hostname checker and the bus housekeeping until ctx ends. A silently dead
// consumer would leave slugs held and plans stale, so any part stopping early stops the
// service.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	log := logging.New("apps", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))
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
	// Signed state-changing requests are served once across the replicas (pkg/callerid).
	defer callerid.ShareReplays(callerid.NewSharedNonces(pool))()
	st := store.New(pool)
	kr, err := openKeyring(ctx, cfg, st)
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "keyring ready", "keyring", kr.String())

	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return err
	}
	defer conn.Close()

	svc := app.New(app.Deps{
		Store: st, Keyring: kr, Plans: busapi.Plans{Client: billingbus.PlanClient{Bus: conn, Timeout: planTimeout}},
		Hosting: busapi.Hosting{Bus: conn},
		Zones:   cfg.Zones(), Cleanup: cfg.Cleanup(), AppsDomain: cfg.AppsDomain,
	})
	id := health.NewIdentity("apps", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	web := httpapi.New(httpapi.Deps{
		Apps: svc.Apps, Env: svc.Env, Domains: svc.Domains, AppsDomain: cfg.AppsDomain,
		SigningKey: []byte(cfg.SigningKey), Health: id, Log: log,
	})
	checker := &app.HostnameChecker{
		Store: st, Resolver: newResolver(cfg.DNSResolver), Interval: cfg.DomainCheckInterval,
		Policy: domains.Policy{
			PendingTTL: cfg.DomainPendingTTL, PendingEvery: cfg.DomainCheckInterval, ActiveEvery: cfg.DomainRecheckInterval,
			MissingEvery: cfg.DomainMissingCheckInterval, Grace: cfg.DomainMissingGrace,
		},
		Log: log, Now: time.Now, Batch: 100, Parallel: cfg.DomainCheckParallel, LookupTimeout: cfg.DomainLookupTimeout,
	}

	// Registered before /readyz is served, so it is never ready with a consumer unbound.
	subs := busapi.Consumers{Tx: store.Bind, Log: log, CleanupFrom: cfg.Cleanup()}.Subscriptions()
	// DATABASE_URL follows the app's managed database; its credentials come from the zone.
	subs["databases consumer"] = busapi.DatabaseConsumer{
		Tx: store.Bind, URLs: app.DatabaseURLs{Keyring: kr, Now: time.Now, Log: log}, Bus: conn,
	}.Subscription()
	for name, sub := range subs {
		sub.Ready = id.Await(sub.Queue)
		subs[name] = sub
	}

	g, _ := lifecycle.New(ctx)
	g.Go("http", func(context.Context) error { return web.Listen(cfg.Addr) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := web.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(context.WithoutCancel(ctx), "http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("relay", bus.NewRelay(conn, pool, log).Run)
	for name, sub := range subs {
		g.Go(name, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	// Snapshots are taken and compared only for the deploys service, and opened only for a
	// zone (which must also host the deploy).
	fromDeploys := bus.Is(bus.PrincipalDeploys)
	g.Go("env snapshot responder", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvSnapshot, bus.OnlyFrom(fromDeploys, busapi.EnvSnapshot(svc.Env)))
	})
	g.Go("env same responder", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvSame, bus.OnlyFrom(fromDeploys, busapi.EnvSame(svc.Env)))
	})
	g.Go("env open responder", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvOpen, bus.OnlyFrom(bus.IsZone, busapi.EnvOpen(svc.Env)))
	})
	g.Go("app lookup responder", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueAppLookup, busapi.AppLookup(svc.Apps))
	})
	g.Every(log, lifecycle.Job{
		Name: "check custom hostnames", Every: cfg.DomainCheckInterval, Immediately: true, Run: checker.CheckOnce,
	})
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, 0, log) })
	log.InfoContext(ctx, "listening", "addr", cfg.Addr)
	return g.Wait()
}

func openDB(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	return pgstore.Connect(ctx, cfg.DatabaseURL, store.Service("").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations, callerid.Migrations))
}

// rotateKeys is `apps rotate-keys`: a new primary key, then every stored value re-sealed
// under it. Old keys stay, so deploy snapshots sealed under them still open.
func rotateKeys(ctx context.Context, env map[string]string, out io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	pool, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	kr, err := openKeyring(ctx, cfg, st)
	if err != nil {
		return err
	}
	rep, err := app.RotateKeys(ctx, kr, st)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rotated %s: new primary key %s; re-encrypted %d values\n", kr, rep.Primary, rep.Reencrypted)
	return nil
}
