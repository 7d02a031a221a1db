package bus

import (
	"context"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const tracerName = "tori.dev/pkg/bus"

// tracer is looked up on each use so that a provider installed after this package loaded
// (telemetry.Setup in main, or a test's recorder) is the one that records.
func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// tableCarrier lets the global propagator read and write AMQP headers.
type tableCarrier amqp.Table

func (t tableCarrier) Get(key string) string {
	switch v := t[key].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func (t tableCarrier) Set(key, value string) { t[key] = value }

func (t tableCarrier) Keys() []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	return keys
}

// injectMap writes ctx's trace context into a string map, the outbox's headers column.
func injectMap(ctx context.Context) map[string]string {
	m := map[string]string{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.MapCarrier(m))
	return m
}

func injectTable(ctx context.Context, t amqp.Table) {
	otel.GetTextMapPropagator().Inject(ctx, tableCarrier(t))
}

func extractTable(ctx context.Context, t amqp.Table) context.Context {
	if t == nil {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, tableCarrier(t))
}

// startSpan starts a messaging span as OpenTelemetry's conventions name its attributes.
func startSpan(ctx context.Context, name string, kind trace.SpanKind, dest, messageID string) (context.Context, trace.Span) {
	return tracer().Start(ctx, name,
		trace.WithSpanKind(kind),
		trace.WithAttributes(
			attribute.String("messaging.system", "rabbitmq"),
			attribute.String("messaging.destination.name", dest),
			attribute.String("messaging.message.id", messageID),
		))
}
