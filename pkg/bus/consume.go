package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
// Every event is handled as if it had come alone, also when the relay sent it in a bundle
// (bundle.go): its own id, attempts and dead letter. A few workers handle deliveries at once,
// and under load a worker handles what has already arrived (up to Prefetch deliveries, about
// maxBatch events) in one transaction, each effect committing with its processed record; when
// a handler fails, the batch is rolled back and its events are handled one by one. So
// handlers must not commit or roll back tx, must not rely on the order of events (which
// retries and several service copies break anyway), and may be called again for an event
// whose earlier call's effect was rolled back. Prefetch 1 handles one delivery at a time, its
// events in queue order. The batch's events are recorded as processed in one statement, and a
// run of handled deliveries is acknowledged with one multiple ack (see acker).
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
	k.log.InfoContext(ctx, "bus consumer subscribed", "keys", k.sub.Keys, "prefetch", k.sub.Prefetch)
	if k.sub.Ready != nil {
		k.sub.Ready()
	}

	s := &consumeSession{consumer: k, stop: make(chan struct{}), dl: &confirmChannel{conn: c}, acks: newAcker(ch, k.log)}
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
				s.handleNext(ctx, d, arrived)
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

// handleNext handles first and whatever else has arrived by the time a database connection is
// free. Taking the connection before gathering matters under load: a worker that waits for one
// then finds a batch waiting too, instead of each worker queueing for a connection with a
// single message while the rest pile up.
func (s *consumeSession) handleNext(ctx context.Context, first received, more <-chan received) {
	conn, err := s.pool.Acquire(ctx)
	batch := gather(first, more, min(s.sub.Prefetch, maxBatch))
	if err != nil {
		conn = nil
	}
	s.handle(ctx, conn, err, batch)
}

// maxBatch bounds the events a batch gathers for one transaction. Past a hundred a commit's
// cost is already spread thin, and a failing handler sends fewer events back to be handled
// one by one. A bundle is never split, so a batch may go past it by one bundle's events.
const maxBatch = 100

// gather adds to first whatever else has already arrived, up to max deliveries and maxBatch
// events: under load a worker handles a batch in one transaction (one commit, one fsync,
// instead of one each); when idle it handles single messages at once.
func gather(first received, more <-chan received, max int) []received {
	batch := []received{first}
	events := first.size()
	for len(batch) < max && events < maxBatch {
		select {
		case r, ok := <-more:
			if !ok {
				return batch
			}
			batch = append(batch, r)
			events += r.size()
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
	acks *acker
}

// infraError is a failure of the bus's own bookkeeping (the database is away), not of the
// handler: it is retried without counting against MaxAttempts.
type infraError struct{ error }

func (e infraError) Unwrap() error { return e.error }

// message is one event being handled, with its consumer span.
type message struct {
	ev        event
	carrier   *carrier
	key       string
	publisher string
	ctx       context.Context // the handler's: carries the span
	span      trace.Span
	base      *slog.Logger // the session's; log adds the message to it
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

// handle takes batch to an end: first all its events in one transaction on conn (acquired for
// it, or nil after acquireErr), then, if that fails, one by one. It releases conn.
func (s *consumeSession) handle(ctx context.Context, conn *pgxpool.Conn, acquireErr error, batch []received) {
	release := func() {
		if conn != nil {
			conn.Release()
			conn = nil
		}
	}
	defer release()
	if s.stopped() {
		return // their channel is gone: the broker redelivers them, acks would be lost
	}
	var msgs, refused []*message
	var reasons []error
	for _, r := range batch {
		d, events, readErr := r.d, r.events, r.err
		if readErr != nil {
			events = []event{wholeDelivery(d)}
		}
		c := &carrier{d: d, open: len(events)}
		key := originalRoutingKey(d)
		publisher := publisherOf(d.UserId)
		owned := s.conn.owns(publisher, key)
		for _, ev := range events {
			hctx, span := startSpan(extractTable(ctx, ev.headers), "consume "+key, trace.SpanKindConsumer, s.queue, ev.id)
			defer span.End()
			m := &message{ev: ev, carrier: c, key: key, publisher: publisher, ctx: hctx, span: span, base: s.log}
			switch {
			case readErr != nil:
				refused, reasons = append(refused, m), append(reasons, readErr)
			case ev.id == "":
				refused, reasons = append(refused, m), append(reasons, errors.New("message has no id"))
			case !owned:
				// Forged, or sent by a service through the default exchange: nobody but the
				// key's owner speaks for it.
				refused, reasons = append(refused, m), append(reasons,
					fmt.Errorf("publisher %q (user %q) does not own routing key %q", publisher, d.UserId, key))
			default:
				msgs = append(msgs, m)
			}
		}
	}
	deliveredEvents.WithLabelValues(s.queueLabel()).Add(float64(len(msgs) + len(refused)))
	failed, err := -1, error(nil)
	switch {
	case len(msgs) == 0:
	case conn == nil:
		err = infraError{fmt.Errorf("bus: acquire a connection: %w", acquireErr)}
	default:
		failed, err = s.attemptBatch(ctx, conn, msgs)
	}
	// The connection goes back before anything below can wait: parking a message, a retry.
	release()
	var done []uint64 // deliveries whose events have all ended: one ack call for all
	for i, m := range refused {
		if tag, ok := s.end(ctx, m, s.deadLetter(m, reasons[i], 0)); ok {
			done = append(done, tag)
		}
	}
	if err == nil {
		for _, m := range msgs {
			if tag, ok := s.end(ctx, m, ended); ok {
				done = append(done, tag)
			}
		}
	}
	if len(done) > 0 {
		s.acks.ack(done...)
	}
	if err == nil || ctx.Err() != nil {
		return
	}
	// One by one, now: only the event whose handler failed has used an attempt.
	if len(msgs) > 1 {
		s.log.DebugContext(ctx, "bus batch failed; handling its events one by one", "size", len(msgs), "err", err)
	}
	for i, m := range msgs {
		var o outcome
		if i == failed {
			o = s.settle(ctx, m, 1, err)
		} else {
			o = s.settle(ctx, m, 0, nil)
		}
		if tag, ok := s.end(ctx, m, o); ok {
			s.acks.ack(tag)
		}
	}
}

// attemptBatch handles msgs in one transaction, each handler's effect committed with its
// processed record. On a handler's error it rolls everything back and returns that message's
// index; on any other error, -1.
func (s *consumeSession) attemptBatch(ctx context.Context, conn *pgxpool.Conn, msgs []*message) (int, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return -1, infraError{fmt.Errorf("bus: begin: %w", err)}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Recorded in id order, so that batches racing over copies of the same events take their
	// processed_messages locks in one order and never deadlock; handled in the order they
	// came, which for a bundle (and for Prefetch 1) is the order of the outbox.
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ev.id
	}
	slices.Sort(ids)
	fresh, err := recordProcessedAll(ctx, tx, s.queue, ids)
	if err != nil {
		return -1, err
	}
	for i, m := range msgs {
		if !fresh[m.ev.id] {
			continue // processed before, or a second copy in this batch
		}
		delete(fresh, m.ev.id)
		if err := callHandler(m.ctx, s.sub.Handle, tx, m.delivery(1)); err != nil {
			return i, err
		}
	}
	return -1, tx.Commit(ctx)
}

// settle takes m's event to an end on its own: handled, dead-lettered (or due to be), or left
// for redelivery when the session or ctx ends. failed attempts have already failed, the last
// with err.
func (s *consumeSession) settle(ctx context.Context, m *message, failed int, err error) outcome {
	infra := backoff{base: s.conn.cfg.BaseBackoff, max: maxRetryDelay}
	attempt := failed
	for {
		if err != nil {
			m.span.RecordError(err)
			if IsPermanent(err) || attempt >= s.conn.cfg.MaxAttempts {
				m.span.SetStatus(codes.Error, "dead-lettered")
				return s.deadLetter(m, err, attempt)
			}
			delay := retryDelay(s.conn.cfg.BaseBackoff, attempt)
			m.log().InfoContext(m.ctx, "bus handler failed; retrying", "attempt", attempt, "retry_in", delay, "err", err)
			retriedEvents.WithLabelValues(s.queueLabel()).Inc()
			if !s.sleep(ctx, m.carrier, delay) {
				return left
			}
		}
		attempt++
		for {
			err = s.attempt(m.ctx, m, attempt)
			var ie infraError
			if !errors.As(err, &ie) {
				break
			}
			m.log().WarnContext(m.ctx, "bus consumer cannot record message; retrying", "err", err)
			if !s.pause(ctx, m.carrier, &infra) {
				return left
			}
		}
		if err == nil {
			return ended
		}
		if ctx.Err() != nil {
			return left // shutting down: unacknowledged, so redelivered to whoever runs next
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
	fresh, err := recordProcessed(ctx, tx, s.queue, m.ev.id)
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

// recordProcessedAll is recordProcessed for many ids in one statement, one round trip instead
// of one each; it returns the ids recorded now. Its locks are taken in the order of ids.
func recordProcessedAll(ctx context.Context, tx pgx.Tx, queue string, ids []string) (map[string]bool, error) {
	rows, _ := tx.Query(ctx, `
		INSERT INTO processed_messages (queue, message_id)
		SELECT $1, id FROM unnest($2::text[]) WITH ORDINALITY AS m(id, n) ORDER BY n
		ON CONFLICT DO NOTHING
		RETURNING message_id`, queue, ids)
	recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, infraError{fmt.Errorf("bus: record processed: %w", err)}
	}
	fresh := make(map[string]bool, len(recorded))
	for _, id := range recorded {
		fresh[id] = true
	}
	return fresh, nil
}

func callHandler(ctx context.Context, h TxHandler, tx pgx.Tx, d Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bus: handler panicked: %v", p)
		}
	}()
	return h(ctx, tx, d)
}

// pause waits out b's next delay before an event of c is tried again; false if the session
// or ctx ended.
func (s *consumeSession) pause(ctx context.Context, c *carrier, b *backoff) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	s.acks.wait(c.d.DeliveryTag, true)
	defer s.acks.wait(c.d.DeliveryTag, false)
	return b.sleep(ctx)
}

// sleep waits d before an event of c is tried again; false if the session or ctx ended.
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
