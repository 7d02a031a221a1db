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
// arrived (up to Prefetch, at most maxBatch) in one transaction, each effect committing with its processed
// record; when a handler fails, the batch is rolled back and its messages are handled one by
// one. So handlers must not commit or roll back tx, must not rely on the order of events
// (which retries and several service copies break anyway), and may be called again for a
// message whose earlier call's effect was rolled back. Prefetch 1 handles one message at a
// time, in queue order. The batch's messages are recorded as processed in one statement, and
// a run of handled deliveries is acknowledged with one multiple ack (see acker).
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
	// ever be waiting to batch; this buffer (never fuller than Prefetch) is where they wait.
	arrived := make(chan amqp.Delivery, k.sub.Prefetch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(arrived)
		for d := range deliveries {
			s.acks.track(d.DeliveryTag) // here, in the order of their tags
			arrived <- d
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

// handleNext handles first and whatever else has arrived by the time a database connection is
// free. Taking the connection before gathering matters under load: a worker that waits for one
// then finds a batch waiting too, instead of each worker queueing for a connection with a
// single message while the rest pile up.
func (s *consumeSession) handleNext(ctx context.Context, first amqp.Delivery, more <-chan amqp.Delivery) {
	conn, err := s.pool.Acquire(ctx)
	batch := gather(first, more, min(s.sub.Prefetch, maxBatch))
	if err != nil {
		conn = nil
	}
	s.handle(ctx, conn, err, batch)
}

// maxBatch bounds the messages handled in one transaction. Past a hundred a commit's cost is
// already spread thin, and a failing handler sends fewer messages back to be handled one by
// one.
const maxBatch = 100

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
	acks *acker
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
	base      *slog.Logger // the session's; log adds the message to it
}

// log is the message's logger, made only when something is logged: most messages never are,
// and a logger With attributes costs a few allocations each.
func (m *message) log() *slog.Logger {
	return m.base.With("message_id", m.d.MessageId, "routing_key", m.key)
}

func (m *message) delivery(attempt int) Delivery {
	return Delivery{ID: m.d.MessageId, RoutingKey: m.key, Type: m.d.Type, Body: m.d.Body, Attempt: attempt, Publisher: m.publisher}
}

// handle takes batch to an end: first all in one transaction on conn (acquired for it, or nil
// after acquireErr), then, if that fails, one by one. It releases conn.
func (s *consumeSession) handle(ctx context.Context, conn *pgxpool.Conn, acquireErr error, batch []amqp.Delivery) {
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
	msgs := make([]*message, 0, len(batch))
	var refused []*message
	var reasons []error
	for _, d := range batch {
		key := originalRoutingKey(d)
		hctx, span := startSpan(extractTable(ctx, d.Headers), "consume "+key, trace.SpanKindConsumer, s.queue, d.MessageId)
		defer span.End()
		m := &message{d: d, key: key, publisher: publisherOf(d.UserId), ctx: hctx, span: span, base: s.log}
		switch {
		case d.MessageId == "":
			refused, reasons = append(refused, m), append(reasons, errors.New("message has no id"))
		case !s.conn.owns(m.publisher, key):
			// Forged, or sent by a service through the default exchange: nobody but the
			// key's owner speaks for it.
			refused, reasons = append(refused, m), append(reasons,
				fmt.Errorf("publisher %q (user %q) does not own routing key %q", m.publisher, d.UserId, key))
		default:
			msgs = append(msgs, m)
		}
	}
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
	for i, m := range refused {
		s.deadLetter(m, reasons[i], 0)
	}
	if len(msgs) == 0 {
		return
	}
	if err == nil {
		tags := make([]uint64, len(msgs))
		for i, m := range msgs {
			tags[i] = m.d.DeliveryTag
		}
		s.acks.ack(tags...)
		return
	}
	if ctx.Err() != nil {
		return
	}
	// One by one, now: only the message whose handler failed has used an attempt.
	if len(msgs) > 1 {
		s.log.DebugContext(ctx, "bus batch failed; handling its messages one by one", "size", len(msgs), "err", err)
	}
	for i, m := range msgs {
		if i == failed {
			s.settle(ctx, m, 1, err)
		} else {
			s.settle(ctx, m, 0, nil)
		}
	}
}

// attemptBatch handles msgs in one transaction, each handler's effect committed with its
// processed record. On a handler's error it rolls everything back and returns that message's
// index; on any other error, -1.
func (s *consumeSession) attemptBatch(ctx context.Context, conn *pgxpool.Conn, msgs []*message) (int, error) {
	// In message id order, so that batches racing over copies of the same messages take
	// their processed_messages locks in one order and never deadlock; ids are UUIDv7, so this
	// is also roughly the order of publishing.
	slices.SortFunc(msgs, func(a, b *message) int { return strings.Compare(a.d.MessageId, b.d.MessageId) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		return -1, infraError{fmt.Errorf("bus: begin: %w", err)}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.d.MessageId
	}
	fresh, err := recordProcessedAll(ctx, tx, s.queue, ids)
	if err != nil {
		return -1, err
	}
	for i, m := range msgs {
		if !fresh[m.d.MessageId] {
			continue // processed before, or a second copy in this batch
		}
		delete(fresh, m.d.MessageId)
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
			m.log().InfoContext(m.ctx, "bus handler failed; retrying", "attempt", attempt, "retry_in", delay, "err", err)
			if !s.sleep(ctx, m, delay) {
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
			m.log().WarnContext(m.ctx, "bus consumer cannot record message; retrying", "err", err)
			if !s.pause(ctx, m, &infra) {
				return
			}
		}
		if err == nil {
			s.acks.ack(m.d.DeliveryTag)
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

// pause waits out b's next delay before m is tried again; false if the session or ctx ended.
func (s *consumeSession) pause(ctx context.Context, m *message, b *backoff) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	s.acks.wait(m.d.DeliveryTag, true)
	defer s.acks.wait(m.d.DeliveryTag, false)
	return b.sleep(ctx)
}

// sleep waits d before m is tried again; false if the session or ctx ended.
func (s *consumeSession) sleep(ctx context.Context, m *message, d time.Duration) bool {
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	s.acks.wait(m.d.DeliveryTag, true)
	defer s.acks.wait(m.d.DeliveryTag, false)
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
