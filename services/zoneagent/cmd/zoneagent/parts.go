package main

import (
	"context"
	"time"

	"tori.dev/pkg/service"
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
