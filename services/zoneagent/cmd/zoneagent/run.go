package main

import (
	"context"
	"io"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// serve is the runtime's composition root: it runs the zone until ctx ends, then stops its
// edge process (edgechild.go: in-flight requests finish within the shutdown timeout), the
// health server, the bus work and every customer process.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	zone := func(cfg *config.Config) []any { return []any{"zone", cfg.Zone} }
	spec := service.Spec[*config.Config]{Name: "zoneagent", Version: version, Env: env, Logs: logs, LogWith: zone}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := settleChildHealthAddrs(cfg); err != nil { // healthaddr.go
			return err
		}
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
		sandbox.RegisterUsage(runner.Identities.AppsDir, runner.Identities.Disks, runner.Source.Sandbox.Cgroups) // /metrics
		// After the group: the edge no longer wakes a process that would then be orphaned.
		p.OnClose(runner.StopAll)
		siteStore, err := openSiteStore(*cfg)
		if err != nil {
			return err
		}
		agent, err := usecase.New(usecase.Deps{Zone: cfg.Zone, Store: st, Artifacts: artifacts, Sites: siteStore, Table: table, Runner: runner, Log: log})
		if err != nil {
			return err
		}

		edgeChild, err := startEdge(p, *cfg, env, table, runner) // edgechild.go: the edge, unprivileged
		if err != nil {
			return err
		}
		posture := cfg.Posture()
		posture.Edge = edgeChild.posture
		for _, w := range posture.Warnings() {
			log.WarnContext(ctx, w)
		}
		healthApp := httpserver.New(httpserver.Options{Name: "zoneagent", Log: log, WriteTimeout: 10 * time.Second,
			Observe: httpserver.MetricsOnly, Health: &p.Health, Ready: readyz(p.Health, runner.Source.Sandbox.Unavailable, posture)})
		p.Consume(busapi.Subscriptions(agent)...)
		// Runs the zone held when it last stopped are reported failed before any new one is
		// taken.
		cronRuns := usecase.NewCronRuns(cfg.Zone, st, runner, log)
		if err := cronRuns.Recover(ctx); err != nil {
			return err
		}
		p.Consume(busapi.CronSubscription(cronRuns))
		// The managed databases: a process of their own (dbhost.go).
		if err := hostDatabases(p, *cfg, st, env, logs); err != nil {
			return err
		}
		if err := p.ServeHTTP(healthApp, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		p.Go("agent", agent.Run)
		p.Go("agent profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.AgentProfiling(), log) })
		p.Every(agent.PollJob())
		p.Every(agent.SiteSweepJob())
		p.Go("log batches", logBatches.Run)
		p.Every(runner.NapJob())
		sampleInstances(p, *cfg, st, runner) // instancemetrics.go
		p.Listening("edge", []string{cfg.EdgeAddr, cfg.TLSAddr}, "edge_pid", edgeChild.pid, "edge_health", cfg.EdgeHealthAddr, "edge_user", edgeChild.user, "apps_domain", posture.AppsDomain, "certificates", posture.Certificates)
		return nil
	})
}
