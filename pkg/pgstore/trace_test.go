package pgstore_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// A query run inside a trace gets a child span naming its operation, with its text when the
// text holds no literal; a query outside any trace gets none.
func TestQueriesGetSpansInsideATrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	url := testinfra.NewDatabase(t, "pgstore_trace", func(context.Context, string) error { return nil })
	pool, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	var n int
	if err := pool.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	before := len(rec.Ended())

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if err := pool.QueryRow(ctx, "SELECT $1::int", 2).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT length('secret-literal')").Scan(&n); err != nil {
		t.Fatal(err)
	}
	parent.End()

	var queries []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended()[before:] {
		if s.Name() == "postgres SELECT" {
			queries = append(queries, s)
		}
	}
	if len(queries) != 2 {
		t.Fatalf("%d query spans inside the trace (and %d before it), want 2 and 0", len(queries), before)
	}
	text := func(s sdktrace.ReadOnlySpan) string {
		for _, a := range s.Attributes() {
			if a.Key == "db.query.text" {
				return a.Value.AsString()
			}
		}
		return ""
	}
	for _, q := range queries {
		if q.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("query span's parent is %v, want the request", q.Parent().SpanID())
		}
	}
	if text(queries[0]) != "SELECT $1::int" || text(queries[1]) != "" {
		t.Errorf("statement texts %q and %q: want the first, and none for the one with a literal", text(queries[0]), text(queries[1]))
	}
}
