package main

import (
	"context"
	"time"

	"tori.dev/pkg/service"
)

// serveEdge adds the edge's servers to p: they serve until the process stops, then get the
// shutdown timeout to finish the requests in flight; drained closes once they have.
func serveEdge(p *service.Process, edges *edgeServers, shutdownTimeout time.Duration) (drained <-chan struct{}) {
	p.OnClose(edges.close) // a stop before they served would otherwise leave them accepting
	p.Go("edge", edges.Serve)
	done := make(chan struct{})
	p.Go("edge shutdown", func(ctx context.Context) error {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if err := edges.Shutdown(sctx); err != nil {
			p.Log.WarnContext(sctx, "edge shutdown", "err", err.Error())
		}
		return nil
	})
	return done
}
