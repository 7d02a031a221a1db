package pgstore

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// queryTracer gives each query a client span inside the caller's trace (pgx's tracer hook),
// so a slow query shows in the request, message or job that ran it. A query outside any trace
// (a periodic job between requests) gets none. The span names the operation; it carries the
// statement's text only when the text holds no literal ('…'), so a password written into a
// statement can never reach a trace.
type queryTracer struct{ tracer trace.Tracer }

func newQueryTracer() queryTracer { return queryTracer{tracer: otel.Tracer("tori.dev/pkg/pgstore")} }

type querySpanKey struct{}

// maxStatement keeps a long statement from bloating its span.
const maxStatement = 500

func (q queryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	op := operation(data.SQL)
	attrs := []attribute.KeyValue{
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.operation.name", op),
	}
	if !strings.Contains(data.SQL, "'") {
		attrs = append(attrs, attribute.String("db.query.text", truncate(strings.TrimSpace(data.SQL), maxStatement)))
	}
	ctx, span := q.tracer.Start(ctx, "postgres "+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, querySpanKey{}, span)
}

func (q queryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	span, ok := ctx.Value(querySpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if data.Err != nil {
		span.SetStatus(codes.Error, "query failed")
	}
	span.End()
}

// operation is a statement's first word in capitals ("SELECT"), or "QUERY".
func operation(sql string) string {
	for _, line := range strings.Split(sql, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		return strings.ToUpper(strings.Trim(strings.Fields(line)[0], "(;"))
	}
	return "QUERY"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
