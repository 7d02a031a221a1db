package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
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
	id := health.NewIdentity("billing", version)
	accounts := events.AccountsSubscription(svc)
	accounts.Ready = id.Await(accounts.Queue)
	app := httpapi.New(httpapi.Deps{
		Billing:    svc,
		SigningKey: []byte(cfg.SigningKey),
		Health:     id,
		Log:        log,
	})
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
	g.Go("account consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, accounts)
	})
	g.Go("account plan responder", func(ctx context.Context) error {
		return conn.Serve(ctx, events.AccountPlanQueue, events.AccountPlanResponder(svc))
	})
	// Keeps the outbox and processed-message tables from growing without end.
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, 0, log) })
	log.Info("listening", "addr", ln.Addr().String())

	err = g.Wait()
	log.Info("stopped", "err", err)
	return err
}
