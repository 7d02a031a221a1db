package main

import (
	"context"
	"io"
	"net"

	"tori.dev/pkg/metrics"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/service"
	"tori.dev/services/gateway"
	"tori.dev/services/gateway/internal/accountview"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/config"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/httpapi"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/readiness"
)

// serve is the gateway's composition root: it wires the gateway from env (the process's own
// when nil, as main passes), logs to logs, and serves until ctx ends or any of its parts
// stops.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	return service.Run(ctx, service.Spec[*config.Config]{Name: "gateway", Version: version, Env: env, Logs: logs}, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		// Idempotency keys live in Postgres; a handful of connections would queue requests.
		if err := p.OpenPostgres(ctx, cfg.DatabaseURL, "gateway",
			pgstore.WithMigrations(ratelimit.Migrations, idempotency.Migrations), pgstore.WithMaxConns(cfg.DBMaxConns)); err != nil {
			return err
		}
		log := p.Log

		key := []byte(cfg.SigningKey)
		transport := proxy.NewTransport()
		p.OnClose(transport.CloseIdleConnections)
		cache := auth.NewCache()
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		revocations := auth.NewRevocations(p.Bus, cache, log)
		counted, err := openCounters(*cfg)
		if err != nil {
			return err
		}
		// memory counters prune themselves; Redis expires each with its window or lease
		p.OnClose(counted.close)
		streams := logStreams(p, cfg.LogStreamsPerAccount, counted.places, revocations, log)
		var accounts *httpapi.AccountViews
		if cfg.AccountCacheTTL > 0 {
			accounts = &httpapi.AccountViews{Cache: accountview.New(cfg.AccountCacheTTL), Trusted: revocations.Trusted}
			revocations.KeepAccounts(accounts.Cache)
		}
		authenticator := auth.NewAuthenticator(auth.NewIdentityClient(trimBase(cfg.IdentityURL), key, transport), cache, revocations, cfg.TokenCacheTTL)
		keys := idempotency.NewPostgres(p.Pool)
		proxies, err := cfg.Proxies()
		if err != nil {
			return err
		}
		app := httpapi.New(httpapi.Deps{
			Log: log, Identity: p.Health, OpenAPI: gateway.OpenAPI, Upstreams: upstreams(*cfg), Auth: authenticator,
			Limits:   ratelimit.NewPolicy(counted.limiter, cfg.AuthLimitPer15Min, log),
			ClientIP: clientip.New(proxies), CORS: cors.New(cfg.AllowedOrigins()),
			Proxy:  proxy.New(transport, key, httpapi.MaxBody),
			Ready:  readiness.New(transport, cfg.ReadyTargets(), cfg.ReadyCacheTTL),
			Tokens: cache, Streams: streams, Accounts: accounts, Idempotency: keys,
		})
		perIP := func(ln net.Listener) net.Listener { return httpapi.Listen(ln, cfg.MaxConnsPerIP) }
		if err := p.ServeHTTP(app, cfg.Addr, cfg.ShutdownTimeout, perIP); err != nil {
			return err
		}
		p.Go("revocation listener", revocations.Listen)
		p.Go("revocation watch", revocations.Watch)
		p.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
		p.Go("metrics", func(ctx context.Context) error { return metrics.Serve(ctx, cfg.MetricsAddr, log) })
		p.Every(cache.SweepJob())
		if accounts != nil {
			p.Every(accounts.Cache.SweepJob())
		}
		p.Every(idempotency.PruneJob(keys))
		return nil
	})
}
