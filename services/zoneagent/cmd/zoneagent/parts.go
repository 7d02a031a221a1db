package main

import (
	"context"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/pooler"
	"tori.dev/services/zoneagent/internal/store"
)

// serveEdge adds the edge's servers to p: they serve until the process stops, then get the
// shutdown timeout to finish the requests in flight.
func serveEdge(p *service.Process, edges *edgeServers, shutdownTimeout time.Duration) {
	p.OnClose(edges.close) // a stop before they served would otherwise leave them accepting
	p.Go("edge", edges.Serve)
	p.Go("edge shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if err := edges.Shutdown(sctx); err != nil {
			p.Log.WarnContext(sctx, "edge shutdown", "err", err.Error())
		}
		return nil
	})
}

// runPooler adds the managed databases' pooler to p, with its size checks, its statement
// watchdog and, where the pooler takes them, the per-database client caps.
func runPooler(p *service.Process, cfg config.Config, st *store.Store, dbs *app.Databases, pool *pooler.Pooler) error {
	capsJob, removeCaps, capsOK, err := poolerClientCaps(cfg, st, pool, p.Log)
	if err != nil {
		return err
	}
	p.Go("pooler", pool.Run)
	// A pooler that does not come up stops the zone, naming it; a database command taken
	// before it answers fails and is retried by the bus.
	p.Every(lifecycle.Job{Name: "database sizes", Every: cfg.SizeCheckInterval, Run: dbs.CheckSizes})
	p.Every(statementWatchdog(cfg))
	if job, ok := ceilingWatch(cfg, dbs, pool); ok {
		p.Every(job)
	}
	if capsOK {
		p.Every(capsJob)
		p.Go("pooler client caps removal", func(ctx context.Context) error {
			<-ctx.Done()
			removeCaps()
			return nil
		})
	}
	p.Go("pooler start", func(ctx context.Context) error {
		if err := awaitPooler(ctx, pool); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	})
	return nil
}
