package main

import (
	"context"
	"io"
	"os"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/service"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/config"
	"tori.dev/services/deploys/internal/httpapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/usecase"
)

// serve is the one composition root: it serves until ctx ends, then drains requests within
// the shutdown timeout. Tests run it in-process with an environment of their own.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "deploys", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		// Every artifact lives in the object store; zones fetch one by a presigned URL.
		bucket, err := objectstore.New(cfg.ObjectStore())
		if err != nil {
			return err
		}
		objs := objects.NewS3(bucket)
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations); err != nil {
			return err
		}

		registries, err := cfg.Registries() // validated at load; the error cannot happen here
		if err != nil {
			return err
		}
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		conn := p.Bus
		svc := usecase.New(usecase.Deps{
			Registries: registries,
			Store:      store.New(p.Pool), Objects: objs, ArtifactLinks: objs, Plans: busapi.BillingPlans{Client: billingbus.PlanClient{Bus: conn}},
			Env: busapi.NewAppsEnv(conn), Apps: busapi.AppsLookup{Client: appsbus.AppClient{Bus: conn, Timeout: cfg.AppLookupTimeout}}, Log: p.Log,
		})
		crons := svc.Crons(store.New(p.Pool), cfg.CronMinIntervalMinutes)
		web := httpapi.New(httpapi.Deps{Deploys: svc, Crons: crons, Previews: svc, PreviewsDomain: cfg.Previews(),
			SigningKey: []byte(cfg.SigningKey), DB: p.Pool, Health: p.Health, Log: p.Log})
		p.Consume(busapi.Subscriptions(svc, store.Bind)...)
		p.Consume(busapi.CronSubscriptions(crons, store.BindCron)...)
		if err := p.ServeHTTP(web, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		p.Respond("hosting responder", deploysbus.QueueHosting, bus.OnlyFrom(bus.Is(bus.PrincipalApps), busapi.Hosting(svc)))
		p.Respond("artifact url responder", deploysbus.QueueArtifactURL, bus.OnlyFrom(bus.IsZone, busapi.ArtifactURL(svc)))
		for _, job := range sweepJobs(svc, *cfg) {
			p.Every(job)
		}
		for _, job := range cronJobs(crons, *cfg) {
			p.Every(job)
		}
		return nil
	})
}

// run serves with the process's own environment and logs to stderr.
func run(ctx context.Context) error {
	return serve(ctx, nil, os.Stderr)
}

// sweepJobs close overdue deploys, clean deleted apps, remove unreferenced artifacts and
// redeploy running services after a plan change, each
// on its own every DEPLOYS_SWEEP_EVERY and once at start, so a restart catches up at once.
func sweepJobs(svc *usecase.Service, cfg config.Config) []lifecycle.Job {
	return []lifecycle.Job{
		{Name: "close overdue deploys", Every: cfg.SweepEvery, Immediately: true, Run: svc.CloseOverdue},
		{Name: "clean deleted apps", Every: cfg.SweepEvery, Immediately: true, Run: svc.CleanDeletedApps},
		{Name: "sweep unreferenced artifacts", Every: cfg.SweepEvery, Immediately: true, Run: func(ctx context.Context) (int64, error) {
			return svc.SweepArtifacts(ctx, cfg.ArtifactGrace)
		}},
		{Name: "redeploy for plan changes", Every: cfg.SweepEvery, Immediately: true, Run: svc.RedeployForPlans},
		{Name: "mark reclaimable artifacts", Every: cfg.SweepEvery, Immediately: true, Run: svc.MarkReclaimable},
		// Previews expire within this of their time (DESIGN40); each replica's round takes the
		// due rows FOR UPDATE SKIP LOCKED, so one replica expires each.
		{Name: "expire previews", Every: previewSweepEvery, Immediately: true, Run: svc.ExpirePreviews},
		{Name: "prune preview revisions", Every: cfg.SweepEvery, Immediately: true, Run: svc.PrunePreviewRevisions},
	}
}

// previewSweepEvery is how often expired previews are removed.
const previewSweepEvery = 5 * time.Second

// cronJobs fire due cron ticks every DEPLOYS_CRON_TICK_EVERY (once at start, so a restart
// catches up at once), and on the sweep's beat fail the runs no zone reported on and clear
// the cron jobs of deleted apps.
func cronJobs(crons *usecase.Crons, cfg config.Config) []lifecycle.Job {
	return []lifecycle.Job{
		{Name: "fire due cron ticks", Every: cfg.CronTickEvery, Immediately: true, Run: crons.FireDue},
		{Name: "fail unreported cron runs", Every: cfg.SweepEvery, Immediately: true, Run: crons.FailUnreported},
		{Name: "remove cron jobs of deleted apps", Every: cfg.SweepEvery, Immediately: true, Run: crons.RemoveCronsOfDeletedApps},
	}
}
