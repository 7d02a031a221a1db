package usecase

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// A deploy command is recorded by its consumer and prepared later by the worker, in a context
// of its own; commandTraces carries the command's trace across that gap (in memory: after an
// agent restart the preparation starts a trace of its own), so one trace shows a deploy from
// the gateway to the zone's build and start.
var (
	commandTracesMu sync.Mutex
	commandTraces   = map[string]trace.SpanContext{} // deploy id → the command's span
)

// maxCommandTraces bounds what revisions never prepared (discarded first) leave behind.
const maxCommandTraces = 10000

// rememberTrace keeps the trace of the command that recorded deployID.
func rememberTrace(ctx context.Context, deployID string) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	commandTracesMu.Lock()
	defer commandTracesMu.Unlock()
	if len(commandTraces) >= maxCommandTraces {
		clear(commandTraces)
	}
	commandTraces[deployID] = sc
}

// prepareSpan starts the span of deployID's preparation, inside its command's trace when
// that is known.
func prepareSpan(ctx context.Context, deployID string) (context.Context, trace.Span) {
	commandTracesMu.Lock()
	sc, ok := commandTraces[deployID]
	delete(commandTraces, deployID)
	commandTracesMu.Unlock()
	if ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return otel.Tracer("tori.dev/services/zoneagent/app").Start(ctx, "zone prepare",
		trace.WithAttributes(attribute.String("tori.deploy_id", deployID)))
}
