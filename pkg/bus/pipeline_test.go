package bus

import (
	"context"
	"log/slog"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// testMessage is an event as the pipeline's steps see it, outside any session.
func testMessage(id, publisher, key string) *message {
	ctx := context.Background()
	return &message{
		ev:        event{id: id, typ: "tori.test.v1.Event", body: []byte("body")},
		carrier:   &carrier{d: amqp.Delivery{UserId: publisher}, open: 1},
		key:       key,
		publisher: publisher,
		ctx:       ctx,
		span:      trace.SpanFromContext(ctx),
		base:      slog.New(slog.DiscardHandler),
	}
}
