package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/service"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/store"
)

// run serves with the process's environment and logs to stderr.
func run(ctx context.Context) error { return serve(ctx, nil, os.Stderr) }

// serve is the composition root: it runs the zone until ctx ends, then stops the edge and the
// health server (in-flight requests finish within the shutdown timeout), the bus work and
// every customer process.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	zone := func(cfg *config.Config) []any { return []any{"zone", cfg.Zone} }
	spec := service.Spec[*config.Config]{Name: "zoneagent", Version: version, Env: env, Logs: logs, LogWith: zone}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenPostgres(ctx, cfg.DatabaseURL, store.Service(cfg.Zone, "").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations)); err != nil {
			return err
		}
		st, log, table := store.New(p.Pool), p.Log, edge.NewTable()
		logBatches := busapi.NewLogs(st, log)
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		// Artifacts come from the object store by URLs deploys hands this zone at fetch time.
		artifacts := artifact.Fetcher{URLs: busapi.ArtifactURLs{Conn: p.Bus}}
		runner, err := newRunner(ctx, *cfg, st, busapi.EnvOpener{Conn: p.Bus}, artifacts, logBatches, log)
		if err != nil {
			return err
		}
		sandbox.RegisterUsage(runner.AppsDir, runner.Disks, runner.Sandbox.Cgroups) // /metrics
		// After the group: the edge no longer wakes a process that would then be orphaned.
		p.OnClose(runner.StopAll)
		sites := filepath.Join(cfg.DataDir, "sites")
		agent, err := app.New(app.Deps{Zone: cfg.Zone, Store: st, Artifacts: artifacts, SitesDir: sites, Table: table, Runner: runner, Log: log})
		if err != nil {
			return err
		}
		dbs, pooler, err := managedDatabases(*cfg, st, log)
		if err != nil {
			return err
		}

		healthApp := httpserver.New(httpserver.Options{Name: "zoneagent", Log: log, WriteTimeout: 10 * time.Second,
			Observe: httpserver.MetricsOnly, Health: &p.Health, Ready: readyz(p.Health, runner.Sandbox.Unavailable)})
		p.Consume(append(busapi.Subscriptions(agent), busapi.DatabaseSubscription(cfg.Zone, dbs))...)
		if err := p.ServeHTTP(healthApp, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		edges, err := listenEdge(*cfg, p.Pool, &edge.Edge{Domain: cfg.AppsDomain, SitesDir: sites, Table: table, Services: runner}, log)
		if err != nil {
			return err
		}
		serveEdge(p, edges, cfg.ShutdownTimeout)
		p.RelayOutbox()
		if pooler != nil {
			if err := runPooler(p, *cfg, st, dbs, pooler); err != nil {
				return err
			}
		}
		// Only the apps service, which writes DATABASE_URL, learns a database's password.
		p.Respond("database credentials", zonebus.DatabaseCredentialsQueue(cfg.Zone), bus.OnlyFrom(bus.Is(bus.PrincipalApps), busapi.DatabaseCredentials(dbs)))
		p.Go("agent", agent.Run)
		p.Every(agent.PollJob())
		p.Go("log batches", logBatches.Run)
		p.Every(runner.NapJob())
		p.Listening("edge", edges.Addrs())
		return nil
	})
}
