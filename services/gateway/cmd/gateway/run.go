package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/metrics"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/gateway"
	"tori.dev/services/gateway/internal/accountview"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/config"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/httpapi"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/logstreams"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/readiness"
)

func run(ctx context.Context) error { return serve(ctx, pkgconfig.Environ(), os.Stderr) }

// serve is the gateway's composition root: it wires the gateway from env, logging to logs,
// and serves until ctx ends or any of its parts stops.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	log := logging.New("gateway", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(cfg))

	stopTracing, err := telemetry.Setup(ctx, "gateway", version)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))

	// Every authenticated request counts in Postgres, so the default of a handful of
	// connections would queue requests.
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, "gateway",
		pgstore.WithMigrations(ratelimit.Migrations, idempotency.Migrations), pgstore.WithMaxConns(cfg.DBMaxConns))
	if err != nil {
		return err
	}
	defer pool.Close()

	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	defer conn.Close()

	key := []byte(cfg.SigningKey)
	transport := proxy.NewTransport()
	defer transport.CloseIdleConnections()

	cache := auth.NewCache()
	revocations := auth.NewRevocations(conn, cache, log)
	streams := logstreams.New(cfg.LogStreamsPerAccount)
	revocations.OnRevoke(streams.Revoke)
	var accounts *httpapi.AccountViews
	if cfg.AccountCacheTTL > 0 {
		accounts = &httpapi.AccountViews{Cache: accountview.New(cfg.AccountCacheTTL), Trusted: revocations.Trusted}
		revocations.KeepAccounts(accounts.Cache)
	}
	authenticator := auth.NewAuthenticator(auth.NewIdentityClient(trimBase(cfg.IdentityURL), key, transport), cache, revocations, cfg.TokenCacheTTL)
	limiter, closeLimiter, err := openLimiter(cfg)
	if err != nil {
		return err
	}
	defer closeLimiter()
	// Memory counters prune themselves; Redis expires each with its window.
	keys := idempotency.NewPostgres(pool)
	proxies, err := cfg.Proxies()
	if err != nil {
		return err
	}

	upstreams := map[string]string{}
	for name, u := range cfg.Upstreams() {
		upstreams[name] = trimBase(u)
	}
	id := health.NewIdentity("gateway", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	app := httpapi.New(httpapi.Deps{
		Log:       log,
		Identity:  id,
		OpenAPI:   gateway.OpenAPI,
		Upstreams: upstreams,
		Auth:      authenticator,
		Limits:    ratelimit.NewPolicy(limiter, cfg.AuthLimitPer15Min, log),
		ClientIP:  clientip.New(proxies),
		CORS:      cors.New(cfg.AllowedOrigins()),
		Proxy:     proxy.New(transport, key, httpapi.MaxBody),
		Ready:     readiness.New(transport, cfg.ReadyTargets(), cfg.ReadyCacheTTL),

		Tokens:      cache,
		Streams:     streams,
		Accounts:    accounts,
		Idempotency: keys,
	})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	ln = httpapi.Listen(ln, cfg.MaxConnsPerIP)

	g, _ := lifecycle.New(ctx)
	g.Go("http server", func(context.Context) error { return app.Listener(ln) })
	var shutdownErr error // read after Wait: the group drops a part's error once it is stopping
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		log.InfoContext(context.WithoutCancel(ctx), "shutting down")
		streams.Shutdown() // open log streams end with their final event, or they would hold the shutdown
		if err := app.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			shutdownErr = fmt.Errorf("shutdown: %w", err)
		}
		// A stop before the server took the listener would otherwise leave it accepting.
		_ = ln.Close()
		return nil
	})
	g.Go("revocation listener", revocations.Listen)
	g.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
	g.Go("metrics", func(ctx context.Context) error { return metrics.Serve(ctx, cfg.MetricsAddr, log) })
	g.Go("revocation watch", revocations.Watch)
	g.Every(log, cache.SweepJob())
	if accounts != nil {
		g.Every(log, accounts.Cache.SweepJob())
	}
	g.Every(log, idempotency.PruneJob(keys))
	log.InfoContext(ctx, "listening", "addr", ln.Addr().String())

	err = g.Wait()
	return errors.Join(err, shutdownErr)
}

func trimBase(u string) string { return strings.TrimSuffix(u, "/") }
