package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/metrics"
	"tori.dev/services/gateway/internal/routes"
)

// serverSpan is built once: options allocate, and this one is the same for every request.
var serverSpan = trace.WithSpanKind(trace.SpanKindServer)

// handle wraps every request in a server span and one access-log line, then lets CORS and the
// pipeline deal with it. Errors become responses here, so the log sees the final status.
func (s *Server) handle(c *fiber.Ctx) (err error) {
	start := time.Now()
	m := routes.Find(c.Method(), string(c.Request().URI().PathOriginal()))

	// Background, not the request: the response body streams after the handler returns, and
	// the upstream request must live until then.
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), headerCarrier{&c.Request().Header})
	ctx, span := s.tracer.Start(ctx, m.Op, serverSpan)
	c.SetUserContext(ctx)

	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		if err != nil {
			writeError(c, s.Log, err)
			err = nil
		}
		status := c.Response().StatusCode()
		span.SetAttributes(
			attribute.String("http.request.method", c.Method()),
			attribute.String("http.route", template(m)),
			attribute.Int("http.response.status_code", status),
		)
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
		span.End()
		metrics.ObserveRequest(c.Method(), template(m), status, time.Since(start))
		// Only the template: the path can name things and the query can carry secrets.
		s.Log.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("method", c.Method()),
			slog.String("route", template(m)),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		)
	}()

	return s.CORS.Serve(c, func() error { return s.dispatch(ctx, c, m) })
}

func template(m routes.Match) string {
	if m.Route == nil {
		return routes.Unknown
	}
	return m.Route.Template
}
