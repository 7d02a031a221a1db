package httpapi

import (
	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracing continues the trace the gateway started (its W3C traceparent header) in a server
// span of billing's own, so billing's log lines and the events a request publishes carry the
// same trace id as the gateway's access log.
func tracing() fiber.Handler {
	tracer := otel.Tracer("tori.dev/services/billing/internal/httpapi")
	return func(c *fiber.Ctx) error {
		ctx := otel.GetTextMapPropagator().Extract(c.UserContext(), headerCarrier{c})
		ctx, span := tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)
		err := c.Next()
		// The route template is known only once routing has run.
		span.SetName(c.Method() + " " + c.Route().Path)
		span.SetAttributes(attribute.String("http.route", c.Route().Path))
		if err != nil {
			span.RecordError(err)
		}
		return err
	}
}

// headerCarrier lets the propagator read and write a Fiber request's headers.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return h.c.Get(key) }

func (h headerCarrier) Set(key, value string) { h.c.Request().Header.Set(key, value) }

func (h headerCarrier) Keys() []string {
	var keys []string
	h.c.Request().Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
