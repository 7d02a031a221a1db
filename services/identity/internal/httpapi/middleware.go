package httpapi

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// headerCarrier reads W3C trace context from a Fiber request.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return h.c.Get(key) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return nil }

// observe continues the gateway's trace in a server span, so log lines and outbox events
// carry the request's trace id, and writes one access line per request. It names only the
// route template, never the body or query, where secrets travel.
func observe(log *slog.Logger) fiber.Handler {
	tracer := otel.Tracer("tori.dev/services/identity")
	return func(c *fiber.Ctx) error {
		start := time.Now()
		ctx := otel.GetTextMapPropagator().Extract(c.UserContext(), headerCarrier{c})
		ctx, span := tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)

		err := c.Next()
		if err != nil {
			// Write the error now, so the access line and the span see the real status.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		route := c.Route().Path
		status := c.Response().StatusCode()
		span.SetName(c.Method() + " " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
		log.InfoContext(ctx, "request", "method", c.Method(), "route", route, "status", status,
			"duration_ms", time.Since(start).Milliseconds())
		return nil
	}
}
