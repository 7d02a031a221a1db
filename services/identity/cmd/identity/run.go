package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"tori.dev/pkg/buildinfo"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/telemetry"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/app"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/httpapi"
	"tori.dev/services/identity/internal/mail"
	"tori.dev/services/identity/internal/store"
)

// version is what scripts/build.sh stamps into pkg/buildinfo (scripts/ldflags.sh).
var version = buildinfo.Version

const (
	// pruneEvery is how often spent sign-in codes, grants and sessions are deleted.
	pruneEvery = 10 * time.Minute
	// planTimeout bounds the question to billing on the read path: an account page should
	// not wait the bus's full request timeout before it answers 503.
	planTimeout = 2 * time.Second
)

// run serves with the process's environment and logs to stderr until ctx ends.
func run(ctx context.Context) error {
	return serve(ctx, pkgconfig.Environ(), os.Stderr)
}

// serve is the composition root: it builds every part of the service from env and runs them
// under one lifecycle group until ctx ends or one of them stops; then it drains HTTP within
// the shutdown timeout and releases its connections.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	stopTracing, err := telemetry.Setup(ctx, "identity", version)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))
	log := logging.New("identity", logs)
	log.InfoContext(ctx, "starting", "version", version, "config", pkgconfig.Describe(cfg))

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
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return err
	}

	svc := app.New(app.Deps{
		Store:      store.New(pool),
		Mailer:     mailer,
		Plans:      busapi.BillingPlans{Client: billingbus.PlanClient{Bus: conn, Timeout: planTimeout}},
		Log:        log,
		ConsoleURL: cfg.ConsoleURL,
	})
	id := health.NewIdentity("identity", version)
	// /readyz goes 503 while either is lost, and back once it returns (pkg/health, checks.go).
	id.Check("database", pool.Ping)
	id.Check("broker", conn.Ready)
	web := httpapi.New(httpapi.Config{Service: svc, SigningKey: []byte(cfg.SigningKey), Log: log, Health: id})
	// Registered before /readyz is served, so it is never ready with the consumer unbound.
	plans := busapi.PlanConsumer{Repo: store.Bind, Log: log}.Subscription()
	plans.Ready = id.Await(plans.Queue)
	hostnames := busapi.HostnameMailConsumer{Repo: store.Bind, Service: svc, Log: log}.Subscription()
	hostnames.Ready = id.Await(hostnames.Queue)
	holds := busapi.HoldMailConsumer{Repo: store.Bind, Service: svc, Log: log}.Subscription()
	holds.Ready = id.Await(holds.Queue)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}

	g, gctx := lifecycle.New(ctx)
	g.Go("http", func(context.Context) error { return web.Listener(ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := web.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
			log.WarnContext(context.WithoutCancel(ctx), "http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(conn, pool, log).Run)
	g.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
	g.Go("plans consumer", func(ctx context.Context) error { return conn.Consume(ctx, pool, plans) })
	g.Go("hostname mail consumer", func(ctx context.Context) error { return conn.Consume(ctx, pool, hostnames) })
	g.Go("hold mail consumer", func(ctx context.Context) error { return conn.Consume(ctx, pool, holds) })
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, 0, log) })
	g.Every(log, lifecycle.Job{Name: "prune sign-ins", Every: pruneEvery, Run: svc.PruneSignIns})
	log.InfoContext(gctx, "listening", "addr", ln.Addr().String())
	err = g.Wait()
	log.InfoContext(context.WithoutCancel(ctx), "stopped")
	return err
}

// newMailer picks SMTP when SMTP_URL is set and files under DATA_DIR/mail otherwise.
func newMailer(cfg config.Config, log *slog.Logger) (app.Mailer, error) {
	if cfg.SMTPURL == "" {
		return mail.FileSender{Dir: filepath.Join(cfg.DataDir, "mail"), From: cfg.MailFrom, Log: log, Now: time.Now}, nil
	}
	s, err := config.ParseSMTPURL(cfg.SMTPURL)
	if err != nil {
		return nil, err
	}
	return mail.SMTPSender{Addr: s.Addr, Username: s.Username, Password: s.Password, From: cfg.MailFrom, Log: log, Now: time.Now}, nil
}
