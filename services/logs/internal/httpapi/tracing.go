package httpapi

import (
	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/httperror"
)

// tracing opens a server span per request, continuing the gateway's trace from the W3C
// headers, so one trace id follows a read from the gateway into this service's logs.
func tracing() fiber.Handler {
	tracer := otel.Tracer("tori.dev/services/logs/internal/httpapi")
	return func(c *fiber.Ctx) error {
		ctx := otel.GetTextMapPropagator().Extract(c.UserContext(), headerCarrier{c})
		ctx, span := tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)
		err := c.Next()
		span.SetName(c.Method() + " " + c.Route().Path)
		if he, ok := httperror.From(err); err != nil && (!ok || he.Status >= 500) {
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	}
}

// headerCarrier reads propagation headers from a Fiber request.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return h.c.Get(key) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return nil }
