package telemetry

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/metrics"
)

// ServerSpans is the Fiber middleware a service puts first: it continues the caller's trace
// (the gateway's W3C traceparent) in a server span, so the service's log lines and the
// events a request publishes carry the same trace id as the gateway's access line. With a
// logger it also writes one access line per request, and it counts and times each request
// for /metrics (pkg/metrics). None of these names anything but the method, the route
// template and the status: bodies and query strings carry secrets.
func ServerSpans(tracerName string, log *slog.Logger) fiber.Handler {
	tracer := otel.Tracer(tracerName)
	return func(c *fiber.Ctx) error {
		start := time.Now()
		ctx := otel.GetTextMapPropagator().Extract(c.UserContext(), fiberCarrier{c})
		ctx, span := tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)

		if err := c.Next(); err != nil {
			// Write the error now, so the span and the access line see the real status.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		route := c.Route().Path
		status := c.Response().StatusCode()
		span.SetName(c.Method() + " " + route)
		span.SetAttributes(
			attribute.String("http.request.method", c.Method()),
			attribute.String("http.route", route),
			attribute.Int("http.response.status_code", status),
		)
		if status >= 500 {
			span.SetStatus(codes.Error, "server error")
		}
		metrics.ObserveRequest(c.Method(), metrics.Route(c), status, time.Since(start))
		if log != nil {
			log.InfoContext(ctx, "request", "method", c.Method(), "route", route, "status", status,
				"duration_ms", time.Since(start).Milliseconds())
		}
		return nil
	}
}

// fiberCarrier lets the propagator read a Fiber request's headers.
type fiberCarrier struct{ c *fiber.Ctx }

func (h fiberCarrier) Get(key string) string { return h.c.Get(key) }
func (h fiberCarrier) Set(string, string)    {}
func (h fiberCarrier) Keys() []string {
	var keys []string
	h.c.Request().Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
