package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/gateway"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	gwconfig "tori.dev/services/gateway/internal/config"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/httpapi"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
)

const shutdownTimeout = 10 * time.Second

// run wires the gateway and serves until ctx ends.
func run(ctx context.Context) error {
	var cfg gwconfig.Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("gateway", nil)
	log.InfoContext(ctx, "starting", "version", version, "config", config.Describe(cfg))

	stopTracing, err := telemetry.Setup(ctx, "gateway", version)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))

	pool, err := openPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	defer conn.Close()

	key := []byte(cfg.SigningKey)
	transport := proxy.NewTransport()
	defer transport.CloseIdleConnections()

	cache := auth.NewCache()
	revocations := auth.NewRevocations(conn, cache, log)
	authenticator := auth.NewAuthenticator(auth.NewIdentityClient(trimBase(cfg.IdentityURL), key, transport), cache, revocations, cfg.TokenCacheTTL)
	limiter := ratelimit.NewPostgres(pool)
	proxies, err := cfg.Proxies()
	if err != nil {
		return err
	}

	upstreams := map[string]string{}
	for name, u := range cfg.Upstreams() {
		upstreams[name] = trimBase(u)
	}
	app := httpapi.New(httpapi.Deps{
		Log:       log,
		Identity:  health.NewIdentity("gateway", version),
		OpenAPI:   gateway.OpenAPI,
		Upstreams: upstreams,
		Auth:      authenticator,
		Limits:    ratelimit.NewPolicy(limiter, cfg.AuthLimitPer15Min, log),
		ClientIP:  clientip.New(proxies),
		CORS:      cors.New(cfg.AllowedOrigins()),
		Proxy:     proxy.New(transport, key, httpapi.MaxBody),
	})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	go revocations.Run(ctx)
	go authenticator.RunSweeper(ctx, time.Minute)
	go limiter.RunPruner(ctx, time.Minute, log)

	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	log.InfoContext(ctx, "listening", "addr", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.InfoContext(context.WithoutCancel(ctx), "shutting down")
	if err := app.ShutdownWithTimeout(shutdownTimeout); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// openPool is pgstore.Setup with a pool sized for the gateway: every authenticated request
// counts in Postgres, so the default of a handful of connections would queue requests.
func openPool(ctx context.Context, cfg gwconfig.Config) (*pgxpool.Pool, error) {
	svc := pgstore.Service{Schema: "gateway", Role: "tori_gateway", Password: cfg.DBPassword}
	if err := pgstore.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if err := pgstore.EnsureService(ctx, cfg.DatabaseURL, svc); err != nil {
		return nil, err
	}
	url, err := pgstore.ServiceURL(cfg.DatabaseURL, svc)
	if err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pcfg.MaxConns = cfg.DBMaxConns
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	if err := pgstore.Migrate(ctx, pool, svc.Schema, ratelimit.Migrations); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func trimBase(u string) string { return strings.TrimSuffix(u, "/") }
