package bus

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// listenPrefetch bounds a listener's unacknowledged messages; it handles them in order.
const listenPrefetch = 32

// Listen receives events matching keys on a queue of this process's own (exclusive,
// deleted when the process goes), so every instance of a service sees every such event.
// It has no idempotency record: fn must be safe to repeat. Returns when ctx ends.
//
// The queue lives only as long as the connection: events published while the connection is
// down are not seen (Connected tells when that may be the case). A failing fn is retried like
// a consumer's handler and then dropped with an error in the log; there is no queue to replay
// it into.
func (c *Conn) Listen(ctx context.Context, keys []string, fn func(ctx context.Context, d Delivery) error) error {
	if len(keys) == 0 || fn == nil {
		return errors.New("bus: listen: keys and fn are required")
	}
	log := c.log.With("listen", keys)
	return c.keep(ctx, log, func(ctx context.Context, ch *amqp.Channel) error {
		// Server-named, exclusive and auto-delete: the broker removes it with the connection.
		q, err := ch.QueueDeclare("", false, true, true, false, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeClassic})
		if err != nil {
			return fmt.Errorf("bus: declare listener queue: %w", err)
		}
		for _, key := range keys {
			if err := ch.QueueBind(q.Name, key, c.names.events(), false, nil); err != nil {
				return fmt.Errorf("bus: bind listener to %s: %w", key, err)
			}
		}
		if err := ch.Qos(listenPrefetch, 0, false); err != nil {
			return fmt.Errorf("bus: qos: %w", err)
		}
		deliveries, err := ch.Consume(q.Name, "", false, true, false, false, nil)
		if err != nil {
			return fmt.Errorf("bus: consume %s: %w", q.Name, err)
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		log.InfoContext(ctx, "bus listener subscribed", "queue", q.Name)
		for {
			select {
			case <-ctx.Done():
				return nil
			case e, ok := <-closed:
				return closeErr(e, ok)
			case d, ok := <-deliveries:
				if !ok {
					return errors.New("bus: listener deliveries ended")
				}
				c.listenOne(ctx, d, fn)
			}
		}
	})
}

// listenOne hands each event of d (one, or a bundle's) to fn in order, then acknowledges d.
func (c *Conn) listenOne(ctx context.Context, d amqp.Delivery, fn func(context.Context, Delivery) error) {
	key := originalRoutingKey(d)
	log := c.log.With("message_id", d.MessageId, "routing_key", key)
	publisher := publisherOf(d.UserId)
	events, err := eventsOf(d)
	switch {
	case err != nil:
		log.ErrorContext(ctx, "bus listener dropped a message it cannot read", "err", err)
	case !c.owns(publisher, key):
		log.WarnContext(ctx, "bus listener refused a message its publisher does not own", "user_id", d.UserId)
	default:
		for _, ev := range events {
			if !c.listenEvent(ctx, ev, key, publisher, fn) {
				return // unacknowledged; the queue goes with the connection anyway
			}
		}
	}
	if err := d.Ack(false); err != nil {
		log.DebugContext(ctx, "bus ack failed", "err", err)
	}
}

// listenEvent calls fn for one event until it succeeds or is given up on; false when ctx
// ended first.
func (c *Conn) listenEvent(ctx context.Context, ev event, key, publisher string, fn func(context.Context, Delivery) error) bool {
	hctx := extractTable(ctx, ev.headers)
	hctx, span := startSpan(hctx, "listen "+key, trace.SpanKindConsumer, key, ev.id)
	defer span.End()
	log := c.log.With("message_id", ev.id, "routing_key", key)
	for attempt := 1; ; attempt++ {
		err := callListener(hctx, fn, Delivery{ID: ev.id, RoutingKey: key, Type: ev.typ, Body: ev.body, Attempt: attempt, Publisher: publisher})
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		span.RecordError(err)
		if givesUp(err, attempt, c.cfg.MaxAttempts) {
			log.ErrorContext(hctx, "bus listener gave up on message", "attempts", attempt, "err", err)
			return true
		}
		log.InfoContext(hctx, "bus listener failed; retrying", "attempt", attempt, "err", err)
		if !sleepCtx(ctx, retryDelay(c.cfg.BaseBackoff, attempt)) {
			return false
		}
	}
}

func callListener(ctx context.Context, fn func(context.Context, Delivery) error, d Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bus: listener panicked: %v", p)
		}
	}()
	return fn(ctx, d)
}
