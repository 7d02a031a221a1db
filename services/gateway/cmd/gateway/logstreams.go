package main

import (
	"context"

	"tori.dev/pkg/service"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/logstreams"
)

// logStreams is the gateway's registry of open log streams, at most perAccount each: a
// revoked token's streams end at once, and every stream ends with its final event as the
// shutdown starts, or they would hold it until its timeout.
func logStreams(p *service.Process, perAccount int, revocations *auth.Revocations) *logstreams.Registry {
	streams := logstreams.New(perAccount)
	revocations.OnRevoke(streams.Revoke)
	p.Go("log streams", func(ctx context.Context) error { <-ctx.Done(); streams.Shutdown(); return nil })
	return streams
}
