package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

const defaultPrefetch = 16

// Consume declares sub's queue and bindings and handles messages until ctx ends, across
// reconnects. A message is acknowledged only after its transaction commits.
//
// A few workers handle deliveries at once, and under load a worker handles what has already
// arrived (up to Prefetch) in one transaction, each effect committing with its processed
// record; when a handler fails, the batch is rolled back and its messages are handled one by
// one. So handlers must not commit or roll back tx, must not rely on the order of events
// (which retries and several service copies break anyway), and may be called again for a
// message whose earlier call's effect was rolled back. Prefetch 1 handles one message at a
// time, in queue order.
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
// would only queue for the pool's connections.
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
	k.log.InfoContext(ctx, "bus consumer subscribed", "keys", k.sub.Keys, "prefetch", k.sub.Prefetch)
	if k.sub.Ready != nil {
		k.sub.Ready()
	}

	s := &consumeSession{consumer: k, stop: make(chan struct{}), dl: &confirmChannel{conn: c}}
	defer s.dl.close()
	// amqp091 hands deliveries over one at a time on an unbuffered channel, so nothing would
	// ever be waiting to batch; this buffer (never fuller than Prefetch) is where they wait.
	arrived := make(chan amqp.Delivery, k.sub.Prefetch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(arrived)
		for d := range deliveries {
			arrived <- d
		}
	})
	for range min(k.sub.Prefetch, consumeWorkers) {
		wg.Go(func() {
			for d := range arrived {
				s.handle(ctx, gather(d, arrived, k.sub.Prefetch))
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

// gather adds to first whatever else has already arrived, up to max: under load a worker
// handles a batch in one transaction (one commit, one fsync, instead of one each); when idle
// it handles single messages at once.
func gather(first amqp.Delivery, more <-chan amqp.Delivery, max int) []amqp.Delivery {
	batch := []amqp.Delivery{first}
	for len(batch) < max {
		select {
		case d, ok := <-more:
			if !ok {
				return batch
			}
			batch = append(batch, d)
		default:
			return batch
		}
	}
	return batch
}

// consumeSession is one subscription's lifetime on one channel.
type consumeSession struct {
	*consumer
	stop chan struct{} // closed when the channel is gone: acks would be lost, so stop retrying
	dl   *confirmChannel
}

// infraError is a failure of the bus's own bookkeeping (the database is away), not of the
// handler: it is retried without counting against MaxAttempts.
type infraError struct{ error }

func (e infraError) Unwrap() error { return e.error }

// message is one delivery being handled, with its consumer span.
type message struct {
	d         amqp.Delivery
	key       string
	publisher string
	ctx       context.Context // the handler's: carries the span
	span      trace.Span
	log       *slog.Logger
}

func (m *message) delivery(attempt int) Delivery {
	return Delivery{ID: m.d.MessageId, RoutingKey: m.key, Type: m.d.Type, Body: m.d.Body, Attempt: attempt, Publisher: m.publisher}
}

func (m *message) ack() {
	if err := m.d.Ack(false); err != nil {
		// The channel is gone; the broker redelivers and processed_messages absorbs it.
		m.log.DebugContext(m.ctx, "bus ack failed", "err", err)
	}
}

func (s *consumeSession) handle(ctx context.Context, batch []amqp.Delivery) {
	if s.stopped() {
		return // their channel is gone: the broker redelivers them, acks would be lost
	}
	msgs := make([]*message, 0, len(batch))
	for _, d := range batch {
		key := originalRoutingKey(d)
		hctx, span := startSpan(extractTable(ctx, d.Headers), "consume "+key, trace.SpanKindConsumer, s.queue, d.MessageId)
		defer span.End()
		m := &message{d: d, key: key, publisher: publisherOf(d.UserId), ctx: hctx, span: span,
			log: s.log.With("message_id", d.MessageId, "routing_key", key)}
		if d.MessageId == "" {
			s.deadLetter(m, errors.New("message has no id"), 0)
			continue
		}
		if !s.conn.owns(m.publisher, key) {
			// Forged, or sent by a service through the default exchange: nobody but the
			// key's owner speaks for it.
			s.deadLetter(m, fmt.Errorf("publisher %q (user %q) does not own routing key %q", m.publisher, d.UserId, key), 0)
			continue
		}
		msgs = append(msgs, m)
	}
	if len(msgs) > 1 {
		failed, err := s.attemptBatch(ctx, msgs)
		if err == nil {
			for _, m := range msgs {
				m.ack()
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		// One by one, now: only the message whose handler failed has used an attempt.
		s.log.DebugContext(ctx, "bus batch failed; handling its messages one by one", "size", len(msgs), "err", err)
		for i, m := range msgs {
			if i == failed {
				s.settle(ctx, m, 1, err)
			} else {
				s.settle(ctx, m, 0, nil)
			}
		}
		return
	}
	for _, m := range msgs {
		s.settle(ctx, m, 0, nil)
	}
}

// attemptBatch handles msgs in one transaction, each handler's effect committed with its
// processed record. On a handler's error it rolls everything back and returns that message's
// index; on any other error, -1.
func (s *consumeSession) attemptBatch(ctx context.Context, msgs []*message) (int, error) {
	// In message id order, so that batches racing over copies of the same messages take
	// their processed_messages locks in one order and never deadlock; ids are UUIDv7, so this
	// is also roughly the order of publishing.
	slices.SortFunc(msgs, func(a, b *message) int { return strings.Compare(a.d.MessageId, b.d.MessageId) })
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return -1, infraError{fmt.Errorf("bus: begin: %w", err)}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for i, m := range msgs {
		fresh, err := recordProcessed(m.ctx, tx, s.queue, m.d.MessageId)
		if err != nil {
			return -1, err
		}
		if !fresh {
			continue
		}
		if err := callHandler(m.ctx, s.sub.Handle, tx, m.delivery(1)); err != nil {
			return i, err
		}
	}
	return -1, tx.Commit(ctx)
}

// settle takes m to an end on its own: handled and acknowledged, dead-lettered, or left
// unacknowledged for redelivery when the session or ctx ends. failed attempts have already
// failed, the last with err.
func (s *consumeSession) settle(ctx context.Context, m *message, failed int, err error) {
	infra := backoff{base: s.conn.cfg.BaseBackoff, max: maxRetryDelay}
	attempt := failed
	for {
		if err != nil {
			m.span.RecordError(err)
			if IsPermanent(err) || attempt >= s.conn.cfg.MaxAttempts {
				m.span.SetStatus(codes.Error, "dead-lettered")
				s.deadLetter(m, err, attempt)
				return
			}
			delay := retryDelay(s.conn.cfg.BaseBackoff, attempt)
			m.log.InfoContext(m.ctx, "bus handler failed; retrying", "attempt", attempt, "retry_in", delay, "err", err)
			if !s.sleep(ctx, delay) {
				return
			}
		}
		attempt++
		for {
			err = s.attempt(m.ctx, m, attempt)
			var ie infraError
			if !errors.As(err, &ie) {
				break
			}
			m.log.WarnContext(m.ctx, "bus consumer cannot record message; retrying", "err", err)
			if !s.pause(ctx, &infra) {
				return
			}
		}
		if err == nil {
			m.ack()
			return
		}
		if ctx.Err() != nil {
			return // shutting down: unacknowledged, so redelivered to whoever runs next
		}
	}
}

// attempt runs the handler once in a transaction that also records the message as processed.
// A message recorded before (a redelivery) commits nothing and counts as done.
func (s *consumeSession) attempt(ctx context.Context, m *message, attempt int) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return infraError{fmt.Errorf("bus: begin: %w", err)}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	fresh, err := recordProcessed(ctx, tx, s.queue, m.d.MessageId)
	if err != nil || !fresh {
		return err
	}
	if err := callHandler(ctx, s.sub.Handle, tx, m.delivery(attempt)); err != nil {
		return err
	}
	// A failed commit may be the handler's doing (a deferred constraint), so it counts as an
	// attempt rather than as infrastructure trouble.
	return tx.Commit(ctx)
}

// recordProcessed notes the message in tx; false if it was processed before. It waits on a
// concurrent transaction holding the same id, so two copies in flight at once still have
// one effect.
func recordProcessed(ctx context.Context, tx pgx.Tx, queue, id string) (bool, error) {
	tag, err := tx.Exec(ctx,
		`INSERT INTO processed_messages (queue, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		queue, id)
	if err != nil {
		return false, infraError{fmt.Errorf("bus: record processed: %w", err)}
	}
	return tag.RowsAffected() == 1, nil
}

func callHandler(ctx context.Context, h TxHandler, tx pgx.Tx, d Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bus: handler panicked: %v", p)
		}
	}()
	return h(ctx, tx, d)
}

func (s *consumeSession) pause(ctx context.Context, b *backoff) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	return b.sleep(ctx)
}

func (s *consumeSession) sleep(ctx context.Context, d time.Duration) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
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
