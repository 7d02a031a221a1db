package bus

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
)

// Publish writes msg to the outbox in tx, to be published to the events exchange under
// routingKey once tx commits. The trace context of ctx travels with it.
func Publish(ctx context.Context, tx pgx.Tx, routingKey string, msg proto.Message) error {
	// Checked here because a row the broker refuses would stall the relay behind it.
	if routingKey == "" || len(routingKey) > 255 {
		return fmt.Errorf("bus: publish: routing key must be 1 to 255 bytes, not %d", len(routingKey))
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("bus: publish: message id: %w", err)
	}
	body, err := proto.Marshal(msg)
	if err != nil {
		return fmt.Errorf("bus: publish %s: marshal: %w", routingKey, err)
	}
	// A producer span of its own, so the consumer's span hangs under the publish rather than
	// under whatever the caller was doing; it ends at once because the real send happens
	// later, in the relay.
	ctx, span := startSpan(ctx, "publish "+routingKey, trace.SpanKindProducer, routingKey, id.String())
	headers := injectMap(ctx)
	span.End()
	// The id as its 16 bytes, which pgx sends in binary, rather than through uuid.UUID's
	// driver.Valuer and its text form; and no headers unless there are some (the column's
	// default is the empty object), which saves encoding and parsing JSON on every publish of
	// an untraced event.
	typ := string(msg.ProtoReflect().Descriptor().FullName())
	if len(headers) == 0 {
		_, err = tx.Exec(ctx, `INSERT INTO outbox (id, routing_key, type, body) VALUES ($1, $2, $3, $4)`,
			[16]byte(id), routingKey, typ, body)
	} else {
		_, err = tx.Exec(ctx, `INSERT INTO outbox (id, routing_key, type, body, headers) VALUES ($1, $2, $3, $4, $5)`,
			[16]byte(id), routingKey, typ, body, headers)
	}
	if err != nil {
		return fmt.Errorf("bus: publish %s: %w", routingKey, err)
	}
	return nil
}
