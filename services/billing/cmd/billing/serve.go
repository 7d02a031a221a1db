package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"golang.org/x/sync/errgroup"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/billing/internal/billing"
	"tori.dev/services/billing/internal/config"
	"tori.dev/services/billing/internal/events"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/store"
)

// serve runs the service until ctx ends, then stops taking requests, lets in-flight ones
// finish within the shutdown timeout, and stops the bus work.
func serve(ctx context.Context) error {
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	log := logging.New("billing", nil)
	log.Info("starting", "version", version, "config", pkgconfig.Describe(&cfg))

	stopTracing, err := telemetry.Setup(ctx, "billing", version)
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
	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		return err
	}
	defer conn.Close()

	svc := billing.NewService(store.New(pool), bus.Publish)
	app := httpapi.New(httpapi.Deps{
		Billing:    svc,
		SigningKey: []byte(cfg.SigningKey),
		Health:     health.NewIdentity("billing", version),
		Log:        log,
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(untilDone(gctx, "http server", func() error { return app.Listener(ln) }))
	g.Go(func() error {
		<-gctx.Done()
		return app.ShutdownWithTimeout(cfg.ShutdownTimeout)
	})
	g.Go(untilDone(gctx, "outbox relay", func() error { return bus.NewRelay(conn, pool, log).Run(gctx) }))
	g.Go(untilDone(gctx, "account consumer", func() error {
		return conn.Consume(gctx, pool, events.AccountsSubscription(svc))
	}))
	g.Go(untilDone(gctx, "account plan responder", func() error {
		return conn.Serve(gctx, events.AccountPlanQueue, events.AccountPlanResponder(svc))
	}))
	// Keeps the outbox and processed-message tables from growing without end.
	g.Go(func() error { return bus.Housekeep(gctx, pool, 0, log) })
	log.Info("listening", "addr", ln.Addr().String())

	err = g.Wait()
	log.Info("stopped", "err", err)
	return err
}

// untilDone runs a part of the service that should last as long as ctx. Its stopping early,
// even without an error, is a failure that takes the whole service down rather than leaving
// it half-working.
func untilDone(ctx context.Context, name string, fn func() error) func() error {
	return func() error {
		err := fn()
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			return fmt.Errorf("%s stopped unexpectedly", name)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
}
