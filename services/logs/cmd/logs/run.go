package main

import (
	"context"
	"io"
	"os"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/service"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/store"
	"tori.dev/services/logs/internal/usecase"
)

// run serves with the process's own environment and logs to stderr.
func run(ctx context.Context) error {
	return serve(ctx, nil, os.Stderr)
}

// serve is the composition root: it connects to Postgres and the broker and serves until ctx
// ends. It returns nil after a clean stop and the first part's error otherwise, so the
// process never limps on with a part of it dead.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "logs", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations, store.PoolSettings...); err != nil {
			return err
		}
		st, err := store.New(ctx, p.Pool)
		if err != nil {
			return err
		}
		p.OnClose(st.Close)

		now, log := time.Now, p.Log
		partitions := usecase.NewPartitions(st, log, now, cfg.PartitionsAhead, cfg.MaxRetentionDays)
		// Today's partition exists before the first batch is taken; failing that is failing to
		// start.
		if _, err := partitions.Upkeep(ctx); err != nil {
			return err
		}
		metricParts := usecase.NewMetricsPartitions(st, log, now, cfg.PartitionsAhead, cfg.MetricsMaxRetentionDays)
		if _, err := metricParts.Upkeep(ctx); err != nil {
			return err
		}
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		plans := usecase.NewPlans(st, busapi.BillingPlans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: cfg.PlanLookupTimeout}}, log)
		metricPlans := usecase.NewMetricsPlans(st, busapi.BillingPlans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: cfg.PlanLookupTimeout}}, log)
		apps := usecase.NewAppFinder(st, busapi.AppsLookup{Client: appsbus.AppClient{Bus: p.Bus, Timeout: cfg.AppLookupTimeout}}, log)
		// Open streams end (with their final event) as the shutdown starts, or the HTTP
		// shutdown would wait for them.
		stopping, stopStreams := context.WithCancel(context.WithoutCancel(ctx))
		p.Go("log streams", func(ctx context.Context) error { <-ctx.Done(); stopStreams(); return nil })
		guard, err := drains.TestGuard(cfg.DrainTestHost, cfg.DrainTestCA)
		if err != nil {
			return err
		}
		deliverer := drains.Deliverer{Guard: guard}
		billing := busapi.BillingPlans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: cfg.PlanLookupTimeout}}
		drainSvc := drains.NewService(st, apps, usecase.DrainLimits{Store: st, Copy: st, Billing: billing}, deliverer, now)
		web := httpapi.New(httpapi.Deps{
			Drains:   drainSvc,
			Reader:   usecase.NewReader(apps, st, plans, now),
			Streamer: usecase.NewStreamer(apps, plans, st, now, cfg.StreamLate),
			Stream: httpapi.StreamLimits{
				Poll: cfg.StreamPoll, Heartbeat: cfg.StreamHeartbeat,
				Idle: cfg.StreamIdle, Lifetime: cfg.StreamLifetime,
			},
			Apps: apps, DB: p.Pool,
			Metrics:  usecase.NewMetricsReader(apps, st, metricPlans, now),
			Stopping: stopping, SigningKey: []byte(cfg.SigningKey), Identity: p.Health, Log: log,
		})
		if err := p.ServeHTTP(web, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.Consume(
			busapi.NewIngest(st, usecase.NewIngest(st, log, now, partitions.MaxDays)).Subscription(cfg.IngestPrefetch),
			busapi.NewApps(st, now).Subscription(),
			busapi.NewPlans(st, plans, log).Subscription(),
			busapi.NewMetrics(st, usecase.NewMetricsIngest(st, log, now, metricParts.MaxDays), log).Subscription(),
			busapi.NewMetricsPlans(st, metricPlans, log).Subscription(),
		)
		// Every ingested batch leaves a processed id, so they are kept for less than the bus's
		// default week (still far past any redelivery).
		p.RelayOutboxKeeping(cfg.MaintenanceInterval, bus.Retention{Sent: bus.DefaultKeepSent, Processed: cfg.ProcessedRetention})
		opts := drains.DefaultSenderOptions
		opts.Lease, opts.Backlog = cfg.DrainLease, cfg.DrainBacklog
		sender := drains.NewSender(st, deliverer, opts, "", log, now)
		p.Go("drain sender", sender.Run)
		p.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
		p.Every(lifecycle.Job{Name: "partition maintenance", Every: cfg.MaintenanceInterval, Run: partitions.Upkeep})
		p.Every(lifecycle.Job{Name: "metrics partition maintenance", Every: cfg.MaintenanceInterval, Run: metricParts.Upkeep})
		p.Every(lifecycle.Job{Name: "deleted-app cleanup", Every: cfg.CleanupInterval, Run: usecase.NewCleanup(st, log, now, cfg.CleanupBatch).Run})
		return nil
	})
}
