package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/telemetry"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/app"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/config"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/store"
)

// run picks the command: the service, or an operator command.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return serve(ctx, pkgconfig.Environ(), os.Stderr)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, pkgconfig.Environ(), os.Stderr)
	case "set-plan":
		return setPlan(ctx, pkgconfig.Environ(), args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

const usage = `usage:
  billing [serve]                                   run the service
  billing set-plan -account <id|email> -plan <nestling|songbird|flock> [-timeout 30s]
                                                    move an account to a plan (operators only)
`

// serve is the composition root: it runs the service until ctx ends, then stops taking
// requests, lets in-flight ones finish within the shutdown timeout, and stops the bus work.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	log := logging.New("billing", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(&cfg))

	stopTracing, err := telemetry.Setup(ctx, "billing", version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()

	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, store.Service("").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations, callerid.Migrations))
	if err != nil {
		return err
	}
	defer pool.Close()
	// Signed state-changing requests are served once across the replicas (pkg/callerid).
	defer callerid.ShareReplays(callerid.NewSharedNonces(pool))()
	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return err
	}
	defer conn.Close()

	svc := app.New(store.New(pool), paymentOptions(cfg.Stripe)...)
	id := health.NewIdentity("billing", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	accounts := busapi.AccountsSubscription(svc, store.Bind)
	accounts.Ready = id.Await(accounts.Queue)
	api := httpapi.New(httpapi.Deps{
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
	g.Go("http server", func(context.Context) error { return api.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := api.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(ctx, "http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	g.Go("account consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, accounts)
	})
	g.Go("account plan responder", func(ctx context.Context) error {
		return conn.Serve(ctx, billingbus.QueueAccountPlan, busapi.AccountPlanResponder(svc))
	})
	if svc.Configured() {
		// Holds follow the clock: the notices (mails) of day 0 and before days 7 and 14.
		g.Every(log, lifecycle.Job{
			Name:        "hold notices",
			Every:       cfg.HoldNoticeEvery,
			Immediately: true,
			Run:         svc.SendHoldNotices,
		})
		// VAT IDs judged by their format while VIES was down are asked about again.
		g.Every(log, lifecycle.Job{Name: "recheck VAT IDs", Every: cfg.VATRecheckEvery, Run: svc.RecheckVATIDs})
		// The provider charges what the VAT rules say for each customer now.
		g.Every(log, lifecycle.Job{Name: "apply VAT terms", Every: cfg.VATTermsEvery, Immediately: true, Run: svc.ApplyVATTerms})
	}
	// Keeps the outbox and processed-message tables from growing without end.
	g.Every(log, lifecycle.Job{
		Name:        "bus housekeeping",
		Every:       bus.DefaultHousekeepEvery,
		Immediately: true,
		Run: func(ctx context.Context) (int64, error) {
			return bus.Prune(ctx, pool, bus.DefaultKeepSent, bus.DefaultKeepProcessed)
		},
	})
	log.InfoContext(ctx, "listening", "addr", ln.Addr().String())

	err = g.Wait()
	log.InfoContext(ctx, "stopped", "err", err)
	return err
}
