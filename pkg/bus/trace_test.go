package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// One trace from a span around Publish to the consumer's span, across the outbox, the relay
// and the broker. Not parallel: it installs the global tracer provider and propagator, as a
// service's telemetry.Setup does, and go test runs it before the parallel tests resume.
func TestTraceCrossesTheBus(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		tp.Shutdown(context.Background())
	})

	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	seen := make(chan trace.SpanContext, 1)
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	run(t, "consume", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "trace.effects", Keys: []string{"test.trace.*"},
			Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
				seen <- trace.SpanContextFromContext(ctx)
				return nil
			}})
	})
	ready.wait(t)

	rootCtx, root := tp.Tracer("test").Start(ctx, "create something")
	err := pgstore.InTx(rootCtx, pool, func(tx pgx.Tx) error {
		return bus.Publish(rootCtx, tx, "test.trace.event", &busv1.TestEvent{Seq: 1})
	})
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	var got trace.SpanContext
	select {
	case got = <-seen:
	case <-time.After(20 * time.Second):
		t.Fatal("event not consumed")
	}
	want := root.SpanContext().TraceID()
	if got.TraceID() != want {
		t.Fatalf("handler's trace id %s, want the publisher's %s", got.TraceID(), want)
	}

	// The chain of spans: root → producer (Publish) → consumer (around the handler).
	var consumer sdktrace.ReadOnlySpan
	eventually(t, 5*time.Second, "consumer span ended", func() bool {
		for _, s := range rec.Ended() {
			if s.SpanKind() == trace.SpanKindConsumer && s.SpanContext().SpanID() == got.SpanID() {
				consumer = s
				return true
			}
		}
		return false
	})
	var producer sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanContext().SpanID() == consumer.Parent().SpanID() {
			producer = s
		}
	}
	if producer == nil || producer.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("consumer span's parent %s is not the producer span", consumer.Parent().SpanID())
	}
	if producer.Parent().SpanID() != root.SpanContext().SpanID() {
		t.Fatalf("producer span's parent %s, want the root %s", producer.Parent().SpanID(), root.SpanContext().SpanID())
	}
	if !consumer.Parent().IsRemote() {
		t.Error("consumer span's parent should be remote (extracted from the message)")
	}
}

// The lines an operator needs most, a poisoned message's retries and its dead-lettering, carry
// the trace id of the request that published it, so the message can be followed back to it.
// Not parallel, for the same reason as TestTraceCrossesTheBus.
func TestDeadLetterLineCarriesTheTraceID(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		tp.Shutdown(context.Background())
	})

	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	cfg.MaxAttempts = 2
	logs := &testinfra.LogBuffer{}
	conn := testinfra.DialBus(t, cfg, logging.New("test", logs))
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	run(t, "consume", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "traced.poison", Keys: []string{"test.traced.*"},
			Handle: func(context.Context, bus.Tx, bus.Delivery) error { return errors.New("poison") }})
	})
	ready.wait(t)

	rootCtx, root := tp.Tracer("test").Start(ctx, "request that publishes")
	err := pgstore.InTx(rootCtx, pool, func(tx pgx.Tx) error {
		return bus.Publish(rootCtx, tx, "test.traced.event", &busv1.TestEvent{Seq: 1})
	})
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	want := root.SpanContext().TraceID().String()

	line := func(msg string) map[string]any {
		for _, l := range logs.Lines(t) {
			if l["msg"] == msg {
				return l
			}
		}
		return nil
	}
	testinfra.Eventually(t, 20*time.Second, "the dead-letter line", func() bool { return line("bus message dead-lettered") != nil })
	for _, msg := range []string{"bus handler failed; retrying", "bus message dead-lettered"} {
		l := line(msg)
		if l == nil {
			t.Fatalf("no %q line in\n%s", msg, logs.String())
		}
		if l["trace_id"] != want {
			t.Errorf("%q has trace_id %v, want the publisher's %s", msg, l["trace_id"], want)
		}
	}
}
