package main

import (
	"context"
	"io"
	"os"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/databases/internal/busapi"
	"tori.dev/services/databases/internal/config"
	"tori.dev/services/databases/internal/httpapi"
	"tori.dev/services/databases/internal/store"
	"tori.dev/services/databases/internal/usecase"
)

// clock is the service's time; tests move it (the 24 hours of a rotated-out password).
var clock = time.Now

// serve is the composition root: it connects to Postgres and the broker and serves until ctx
// ends. It returns nil after a clean stop and the first part's error otherwise.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "databases", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations); err != nil {
			return err
		}
		st := store.New(p.Pool)
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		dbs := usecase.NewDatabases(st,
			busapi.AppsLookup{Client: appsbus.AppClient{Bus: p.Bus, Timeout: cfg.AppLookupTimeout}},
			busapi.BillingPlans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: cfg.PlanLookupTimeout}},
			busapi.ZoneDumps{Bus: p.Bus, Timeout: cfg.ZoneRequestTimeout},
			clock, p.Log)
		dbs.DumpHour = cfg.DumpHour
		web := httpapi.New(httpapi.Deps{Databases: dbs, SigningKey: []byte(cfg.SigningKey), DB: p.Pool, Identity: p.Health, Log: p.Log})
		p.Consume(busapi.ZoneReports(st, dbs), busapi.AppDeletions(st, dbs), busapi.PlanChanges(st, dbs), busapi.Deploys(st, dbs))
		if err := p.ServeHTTP(web, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		p.Every(lifecycle.Job{Name: "nightly dumps", Every: cfg.DumpCheckInterval, Run: dbs.NightlyDumps})
		p.Every(lifecycle.Job{Name: "rotation expiry", Every: cfg.RotationCheckInterval, Run: dbs.ExpireRotations})
		return nil
	})
}

// run serves with the process's own environment and logs to stderr.
func run(ctx context.Context) error {
	return serve(ctx, nil, os.Stderr)
}
