package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/config"
	"tori.dev/pkg/health"
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
	app := httpapi.New(httpapi.Deps{
		Apps: svc.Apps, Env: svc.Env, Domains: svc.Domains, AppsDomain: cfg.AppsDomain,
		SigningKey: []byte(cfg.SigningKey), Health: health.NewIdentity("apps", version), Log: log,
	})
	checker := &domains.Checker{
		Store: st, Resolver: domains.NewResolver(cfg.DNSResolver), Interval: cfg.DomainCheckInterval,
		Log: log, Now: time.Now, Batch: 100,
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := app.Listen(cfg.Addr); err != nil {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		return app.ShutdownWithTimeout(10 * time.Second)
	})
	g.Go(func() error { return worker(gctx, "relay", bus.NewRelay(conn, pool, log).Run) })
	g.Go(func() error {
		return worker(gctx, "accounts consumer", func(ctx context.Context) error {
			return conn.Consume(ctx, pool, events.AccountsSubscription(log))
		})
	})
	g.Go(func() error {
		return worker(gctx, "cleanup consumer", func(ctx context.Context) error {
			return conn.Consume(ctx, pool, events.CleanupSubscription(log))
		})
	})
	g.Go(func() error {
		return worker(gctx, "revisions consumer", func(ctx context.Context) error {
			return conn.Consume(ctx, pool, events.RevisionsSubscription(log))
		})
	})
	g.Go(func() error {
		return worker(gctx, "env snapshot responder", func(ctx context.Context) error {
			return conn.Serve(ctx, events.QueueEnvSnapshot, events.EnvSnapshot(svc.Env))
		})
	})
	g.Go(func() error {
		return worker(gctx, "env open responder", func(ctx context.Context) error {
			return conn.Serve(ctx, events.QueueEnvOpen, events.EnvOpen(svc.Env))
		})
	})
	g.Go(func() error { return worker(gctx, "domain checker", checker.Run) })
	g.Go(func() error { return worker(gctx, "pruner", prune(pool, log)) })
	log.InfoContext(ctx, "listening", "addr", cfg.Addr)
	return g.Wait()
}

// worker runs fn; returning while ctx is still live is a failure that stops the service,
// since a silently dead consumer would leave slugs held and plans stale.
func worker(ctx context.Context, name string, fn func(context.Context) error) error {
	err := fn(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("stopped")
	}
	return fmt.Errorf("%s: %w", name, err)
}

// prune drops sent outbox rows and old idempotency records hourly.
func prune(pool *pgxpool.Pool, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			if n, err := bus.Prune(ctx, pool, 24*time.Hour, 7*24*time.Hour); err != nil {
				log.WarnContext(ctx, "prune failed", "err", err.Error())
			} else if n > 0 {
				log.InfoContext(ctx, "pruned bus records", "rows", n)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}
}

func openDB(ctx context.Context, cfg appsconfig.Config) (*pgxpool.Pool, error) {
	return pgstore.Setup(ctx, cfg.DatabaseURL, store.Service(cfg.DBPassword), bus.Migrations, store.Migrations)
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
