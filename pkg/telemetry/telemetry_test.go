package telemetry

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Without a collector spans are not recorded, yet every span has a trace id and continues its
// caller's, so logs and the bus still carry one trace from the gateway on.
func TestWithoutACollectorTraceIdsStillFlow(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	stop, err := Setup(context.Background(), "test", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()

	ctx, root := otel.Tracer("test").Start(context.Background(), "root")
	if !root.SpanContext().TraceID().IsValid() || !root.SpanContext().SpanID().IsValid() {
		t.Fatalf("root span without ids: %v", root.SpanContext())
	}
	if root.IsRecording() {
		t.Fatal("a span is recorded with no collector to send it to")
	}
	h := http.Header{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
	if h.Get("traceparent") == "" {
		t.Fatal("no traceparent sent on")
	}
	remote := otel.GetTextMapPropagator().Extract(context.Background(), propagation.HeaderCarrier(h))
	_, child := otel.Tracer("test").Start(remote, "child", trace.WithSpanKind(trace.SpanKindServer))
	if child.SpanContext().TraceID() != root.SpanContext().TraceID() {
		t.Fatalf("child trace %s, caller's %s", child.SpanContext().TraceID(), root.SpanContext().TraceID())
	}
	if child.SpanContext().SpanID() == root.SpanContext().SpanID() {
		t.Fatal("child reuses the caller's span id")
	}
}
