package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

const defaultPrefetch = 16

// Consume declares sub's queue and bindings and handles messages until ctx ends, across
// reconnects. A message is acknowledged only after its transaction commits.
//
// Every event is handled as if it had come alone, also when the relay sent it in a bundle
// (bundle.go): its own id, attempts and dead letter. A few workers handle deliveries at once.
// Each event goes through the same small steps (pipeline.go): the owner check, a transaction
// that records it as processed and runs the handler with panics recovered, retries with
// backoff, and the dead-letter queue. With Subscription.Batch, a worker under load handles
// what has already arrived in one transaction first (batch.go). So handlers must not commit
// or roll back tx, must not rely on the order of events (which retries and several service
// copies break anyway), and may be called again for an event whose earlier call's effect was
// rolled back. A run of handled deliveries is acknowledged with one multiple ack (ack.go).
// It returns nil when ctx ends, ErrClosed when the Conn closes, and an error at once when the
// broker refuses the queue (declared before with other arguments, or no permission).
func (c *Conn) Consume(ctx context.Context, pool *pgxpool.Pool, sub Subscription) error {
	if sub.Queue == "" || len(sub.Keys) == 0 || sub.Handle == nil {
		return errors.New("bus: consume: Queue, Keys and Handle are required")
	}
	if sub.Prefetch <= 0 {
		sub.Prefetch = defaultPrefetch
	}
	k := &consumer{
		conn:  c,
		pool:  pool,
		sub:   sub,
		queue: c.names.queue(sub.Queue),
	}
	k.log = c.log.With("queue", k.queue)
	showQueue(sub.Queue) // metrics.go
	return c.keep(ctx, k.log, k.session)
}

type consumer struct {
	conn  *Conn
	pool  *pgxpool.Pool
	sub   Subscription
	queue string
	log   *slog.Logger
}

// consumeWorkers bounds the transactions one subscription has open at once; past a few, more
// would only queue for the pool's connections. Fewer would not do: a handler that does real
// work (the logs service's COPY of a batch) needs a few at once to keep both the database's
// cores and its disk busy.
const consumeWorkers = 4

// session subscribes on ch and handles deliveries until ch closes or ctx ends.
func (k *consumer) session(ctx context.Context, ch *amqp.Channel) error {
	c := k.conn
	if _, err := ch.QueueDeclare(k.queue, true, false, false, false, c.durableArgs(true)); err != nil {
		return fmt.Errorf("bus: declare queue %s: %w", k.queue, err)
	}
	for _, key := range k.sub.Keys {
		if err := ch.QueueBind(k.queue, key, c.names.events(), false, nil); err != nil {
			return fmt.Errorf("bus: bind %s to %s: %w", k.queue, key, err)
		}
	}
	if err := ch.Qos(k.sub.Prefetch, 0, false); err != nil {
		return fmt.Errorf("bus: qos: %w", err)
	}
	deliveries, err := ch.Consume(k.queue, "", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("bus: consume %s: %w", k.queue, err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	k.log.InfoContext(ctx, "bus consumer subscribed", "keys", k.sub.Keys, "prefetch", k.sub.Prefetch, "batch", k.sub.Batch)
	if k.sub.Ready != nil {
		k.sub.Ready()
	}

	s := &consumeSession{consumer: k, stop: make(chan struct{}), dl: &confirmChannel{conn: c}, acks: newAcker(ch, k.log)}
	s.pipe = s.pipeline()
	defer s.dl.close()
	// amqp091 hands deliveries over one at a time on an unbuffered channel, so nothing would
	// ever be waiting to batch; this buffer (never fuller than Prefetch) is where they wait,
	// already unpacked into their events.
	arrived := make(chan received, k.sub.Prefetch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(arrived)
		for d := range deliveries {
			s.acks.track(d.DeliveryTag) // here, in the order of their tags
			events, err := eventsOf(d)
			arrived <- received{d: d, events: events, err: err}
		}
	})
	for range min(k.sub.Prefetch, consumeWorkers) {
		wg.Go(func() {
			for d := range arrived {
				if k.sub.Batch {
					s.handleBatch(ctx, d, arrived)
				} else {
					s.handleOne(ctx, d)
				}
			}
		})
	}
	var end error
	select {
	case <-ctx.Done():
	case e, ok := <-closed:
		end = closeErr(e, ok)
	}
	close(s.stop)
	ch.Close() // ends deliveries; whatever is unacknowledged goes back to the queue
	wg.Wait()
	return end
}

// received is a delivery unpacked into its events: one, or a bundle's (bundle.go).
type received struct {
	d      amqp.Delivery
	events []event
	err    error // a bundle that cannot be read
}

// size is how many events r brings to a batch; an unreadable bundle counts as one.
func (r received) size() int { return max(1, len(r.events)) }

// consumeSession is one subscription's lifetime on one channel.
type consumeSession struct {
	*consumer
	stop chan struct{} // closed when the channel is gone: acks would be lost, so stop retrying
	dl   *confirmChannel
	acks *acker
	pipe settleFunc // one event from its first attempt to its end (pipeline.go)
}

// messages are r's events, each with its consumer span; the caller ends the spans.
func (s *consumeSession) messages(ctx context.Context, r received) []*message {
	events := r.events
	if r.err != nil {
		events = []event{wholeDelivery(r.d)}
	}
	c := &carrier{d: r.d, open: len(events)}
	key := originalRoutingKey(r.d)
	publisher := publisherOf(r.d.UserId)
	out := make([]*message, len(events))
	for i, ev := range events {
		hctx, span := startSpan(extractTable(ctx, ev.headers), "consume "+key, trace.SpanKindConsumer, s.queue, ev.id)
		out[i] = &message{ev: ev, carrier: c, key: key, publisher: publisher, unreadable: r.err, ctx: hctx, span: span, base: s.log}
	}
	return out
}

// handleOne takes each event of r to an end in a transaction of its own.
func (s *consumeSession) handleOne(ctx context.Context, r received) {
	if s.stopped() {
		return // their channel is gone: the broker redelivers them, acks would be lost
	}
	msgs := s.messages(ctx, r)
	deliveredEvents.WithLabelValues(s.queueLabel()).Add(float64(len(msgs)))
	for _, m := range msgs {
		o := s.pipe(ctx, m, 0, nil)
		m.span.End()
		if tag, ok := s.end(ctx, m, o); ok {
			s.acks.ack(tag)
		}
	}
}

// infraError is a failure of the bus's own bookkeeping (the database is away), not of the
// handler: it is retried without counting against MaxAttempts.
type infraError struct{ error }

func (e infraError) Unwrap() error { return e.error }

// message is one event being handled, with its consumer span.
type message struct {
	ev         event
	carrier    *carrier
	key        string
	publisher  string
	unreadable error           // the bundle it came in cannot be read: it is the whole delivery
	ctx        context.Context // the handler's: carries the span
	span       trace.Span
	base       *slog.Logger // the session's; log adds the message to it
}

// log is the message's logger, made only when something is logged: most messages never are,
// and a logger With attributes costs a few allocations each.
func (m *message) log() *slog.Logger {
	return m.base.With("message_id", m.ev.id, "routing_key", m.key)
}

func (m *message) delivery(attempt int) Delivery {
	return Delivery{ID: m.ev.id, RoutingKey: m.key, Type: m.ev.typ, Body: m.ev.body, Attempt: attempt, Publisher: m.publisher}
}

// carrier is the delivery that brought one or more events (a bundle). Each event comes to an
// end on its own, handled or parked in the dead-letter queue; the delivery is acknowledged
// once all of them have.
type carrier struct {
	d        amqp.Delivery
	open     int  // events not yet at an end
	returned bool // the dead-letter queue refused one: the delivery goes back to its queue
	left     bool // one was left unfinished (shutdown): the broker redelivers the delivery
}

// outcome is how one event's handling ended.
type outcome uint8

const (
	ended     outcome = iota // handled (or a duplicate), or parked in the dead-letter queue
	notParked                // due for the dead-letter queue, which would not take it
	left                     // the session or ctx ended first
)

// end notes that m's event has come to o. When it was its delivery's last, it returns the
// delivery's tag for the caller to acknowledge, or, when an event could not be parked, puts
// the whole delivery back in its queue after a pause (its handled events are deduplicated on
// redelivery), or, when one was left, leaves it for the broker to redeliver.
func (s *consumeSession) end(ctx context.Context, m *message, o outcome) (uint64, bool) {
	c := m.carrier
	switch o {
	case notParked:
		c.returned = true
	case left:
		c.left = true
	}
	if c.open--; c.open > 0 || c.left {
		return 0, false
	}
	if c.returned {
		// The pause keeps a broken broker from being hammered with the same message.
		s.sleep(ctx, c, retryDelay(s.conn.cfg.BaseBackoff, s.conn.cfg.MaxAttempts))
		if err := s.acks.settle(c.d.DeliveryTag, func() error { return c.d.Nack(false, true) }); err != nil {
			m.log().DebugContext(m.ctx, "bus nack failed", "err", err)
		}
		return 0, false
	}
	return c.d.DeliveryTag, true
}

// sleep waits d before an event of c is tried again; false if the session or ctx ended.
// While it waits, the acker does not hold the deliveries after c back for it.
func (s *consumeSession) sleep(ctx context.Context, c *carrier, d time.Duration) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	s.acks.wait(c.d.DeliveryTag, true)
	defer s.acks.wait(c.d.DeliveryTag, false)
	return sleepCtx(ctx, d)
}

func (s *consumeSession) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// untilStop is ctx, also cancelled when the session's channel goes.
func (s *consumeSession) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// originalRoutingKey is the key the event was published with, also for a replayed message,
// which arrives through the default exchange under its queue's name.
func originalRoutingKey(d amqp.Delivery) string {
	if d.Exchange == "" {
		if k, ok := d.Headers[hdrRoutingKey].(string); ok && k != "" {
			return k
		}
	}
	return d.RoutingKey
}
