package supervisor

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/services/zoneagent/internal/revision"
)

var tracer = otel.Tracer("tori.dev/services/zoneagent/runner")

// startSpan opens a span of a deploy's step on the zone (build, release, start) inside the
// trace of the command that asked for it, naming the app and the deploy, never their contents.
func startSpan(ctx context.Context, name string, rev revision.Revision) (context.Context, trace.Span) {
	return tracer.Start(ctx, name, trace.WithAttributes(
		attribute.String("tori.app_id", rev.AppID),
		attribute.String("tori.deploy_id", rev.DeployID),
	))
}
