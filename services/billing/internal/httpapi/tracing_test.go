package httpapi_test

import (
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"tori.dev/pkg/callerid"
)

// A request carrying the gateway's traceparent is served in a span of the same trace, so one
// trace id follows the request from the gateway into billing.
func TestRequestsContinueTheGatewaysTrace(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	f := newFixture(t)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req := request("GET", "/api/plans", "", callerid.Caller{}, key)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if status, body := do(t, f.app, req); status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want 1", len(ended))
	}
	s := ended[0]
	if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("span %s in trace %s under %s", s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID())
	}
	if s.Name() != "GET /api/plans" {
		t.Fatalf("span name %q", s.Name())
	}
}
