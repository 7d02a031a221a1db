package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/buildinfo"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/service"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/httpapi"
	"tori.dev/services/identity/internal/mail"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/usecase"
)

// version is what scripts/build.sh stamps into pkg/buildinfo (scripts/ldflags.sh).
var version = buildinfo.Version

const (
	// pruneEvery is how often spent sign-in codes, grants and sessions are deleted.
	pruneEvery = 10 * time.Minute
	// auditPruneEvery is how often audit entries past their team's retention go; retention
	// is counted in days, so an hour late is nothing.
	auditPruneEvery = time.Hour
	// planTimeout bounds the question to billing on the read path: an account page should
	// not wait the bus's full request timeout before it answers 503.
	planTimeout = 2 * time.Second
)

// serve is the composition root: it builds every part of the service from env and runs them
// under one lifecycle group until ctx ends or one of them stops; then it drains HTTP within
// the shutdown timeout and releases its connections.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "identity", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations); err != nil {
			return err
		}
		log := p.Log
		mailer, err := newMailer(*cfg, log)
		if err != nil {
			return err
		}
		if err := p.DialBus(ctx); err != nil {
			return err
		}

		svc := usecase.New(usecase.Deps{
			Store:      store.New(p.Pool),
			Mailer:     mailer,
			Plans:      busapi.BillingPlans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: planTimeout}},
			Log:        log,
			ConsoleURL: cfg.ConsoleURL,
		})
		// Identity keeps the audit log, so its gate writes entries straight into it; no route of
		// identity names an app.
		gate := accessgate.New(nil, store.WriteAuditEntry, p.Pool, log)
		web := httpapi.New(httpapi.Config{Service: svc, SigningKey: []byte(cfg.SigningKey), Log: log, Health: p.Health, Gate: gate})
		p.Consume(
			busapi.PlanConsumer{Repo: store.Bind, Log: log}.Subscription(),
			busapi.HostnameMailConsumer{Repo: store.Bind, Service: svc, Log: log}.Subscription(),
			busapi.CertificateMailConsumer{Repo: store.Bind, Service: svc, Log: log}.Subscription(),
			busapi.HoldMailConsumer{Repo: store.Bind, Service: svc, Log: log}.Subscription(),
			busapi.AuditConsumer{Repo: store.Bind, Log: log}.Subscription(),
			busapi.TeamAppsConsumer{Repo: store.Bind, Log: log}.Subscription(),
		)
		if err := p.ServeHTTP(web, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		p.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
		p.Every(lifecycle.Job{Name: "prune sign-ins", Every: pruneEvery, Run: svc.PruneSignIns})
		p.Every(lifecycle.Job{Name: "prune audit entries", Every: auditPruneEvery, Immediately: true, Run: svc.PruneAudit})
		return nil
	})
}

// run serves with the process's environment and logs to stderr until ctx ends.
func run(ctx context.Context) error {
	return serve(ctx, nil, os.Stderr)
}

// newMailer picks SMTP when SMTP_URL is set and files under DATA_DIR/mail otherwise.
func newMailer(cfg config.Config, log *slog.Logger) (usecase.Mailer, error) {
	if cfg.SMTPURL == "" {
		return mail.FileSender{Dir: filepath.Join(cfg.DataDir, "mail"), From: cfg.MailFrom, Log: log, Now: time.Now}, nil
	}
	s, err := config.ParseSMTPURL(cfg.SMTPURL)
	if err != nil {
		return nil, err
	}
	return mail.SMTPSender{Addr: s.Addr, Username: s.Username, Password: s.Password, From: cfg.MailFrom, Log: log, Now: time.Now}, nil
}
