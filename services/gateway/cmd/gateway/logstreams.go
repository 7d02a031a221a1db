package main

import (
	"log/slog"

	"tori.dev/pkg/service"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/logstreams"
)

// logStreams is the gateway's registry of open log streams, at most perAccount each across
// every gateway sharing places: a revoked token's streams end at once, a person's end when
// their roles change (reopened, they are checked with the new ones), and every stream ends
// with its final event as the shutdown starts, or they would hold it until its timeout.
func logStreams(p *service.Process, perAccount int, places logstreams.Places, revocations *auth.Revocations, log *slog.Logger) *logstreams.Registry {
	streams := logstreams.New(perAccount, places, log)
	revocations.OnRevoke(streams.Revoke)
	revocations.OnMembershipChange(streams.EndUser)
	p.Go("log streams", streams.Run)
	return streams
}
