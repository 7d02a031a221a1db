package httpapi

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// traced continues the gateway's trace (W3C traceparent) with a server span per request and
// writes one log line per request. Neither records bodies or query strings: an env value
// must never reach a span or a log.
func traced(log *slog.Logger) fiber.Handler {
	tracer := otel.Tracer("tori.dev/services/apps/httpapi")
	return func(c *fiber.Ctx) error {
		start := time.Now()
		ctx := otel.GetTextMapPropagator().Extract(c.UserContext(), headerCarrier{c})
		ctx, span := tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)

		err := c.Next()
		if err != nil {
			// Let the error handler write the response now, so the status below is real.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		status := c.Response().StatusCode()
		route := c.Route().Path
		span.SetName(c.Method() + " " + route)
		span.SetAttributes(
			attribute.String("http.request.method", c.Method()),
			attribute.String("http.route", route),
			attribute.Int("http.response.status_code", status),
		)
		if status >= 500 {
			span.SetStatus(codes.Error, "server error")
		}
		log.InfoContext(ctx, "request", "method", c.Method(), "route", route, "status", status,
			"duration_ms", time.Since(start).Milliseconds())
		return nil
	}
}

// headerCarrier lets the propagator read fasthttp's request headers.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return h.c.Get(key) }
func (h headerCarrier) Set(key, value string) { h.c.Request().Header.Set(key, value) }
func (h headerCarrier) Keys() []string {
	var keys []string
	h.c.Request().Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
