package bus

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Batching, for a subscription that turns it on (Subscription.Batch; the logs service's
// ingest): under load a worker handles what has already arrived, up to Prefetch deliveries
// and about maxBatch events, in one transaction, each effect committing with its processed
// record (one commit and one fsync instead of one each). The batch's ids are recorded in one
// statement. When a handler fails, the batch is rolled back and its events take the whole
// per-event chain one by one (pipeline.go), only the failed one having used an attempt.

// maxBatch bounds the events a batch gathers for one transaction. Past a hundred a commit's
// cost is already spread thin, and a failing handler sends fewer events back to be handled
// one by one. A bundle is never split, so a batch may go past it by one bundle's events.
const maxBatch = 100

// handleBatch handles first and whatever else has arrived by the time a database connection
// is free. Taking the connection before gathering matters under load: a worker that waits for
// one then finds a batch waiting too, instead of each worker queueing for a connection with a
// single message while the rest pile up.
func (s *consumeSession) handleBatch(ctx context.Context, first received, more <-chan received) {
	conn, err := s.pool.Acquire(ctx)
	batch := gather(first, more, min(s.sub.Prefetch, maxBatch))
	if err != nil {
		conn = nil
	}
	s.handleGathered(ctx, conn, err, batch)
}

// gather adds to first whatever else has already arrived, up to max deliveries and maxBatch
// events: under load a worker handles a batch in one transaction; when idle it handles single
// messages at once.
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

// handleGathered takes batch to an end: first all its events in one transaction on conn
// (acquired for it, or nil after acquireErr), then, if that fails, one by one. It releases
// conn.
func (s *consumeSession) handleGathered(ctx context.Context, conn *pgxpool.Conn, acquireErr error, batch []received) {
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
		for _, m := range s.messages(ctx, r) {
			defer m.span.End()
			if err := refuse(s.conn.owns, m); err != nil {
				refused, reasons = append(refused, m), append(reasons, err)
			} else {
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
			o = s.pipe(ctx, m, 1, err)
		} else {
			o = s.pipe(ctx, m, 0, nil)
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
	handle := recovering(s.sub.Handle)
	btx, commit := committing(tx)
	for i, m := range msgs {
		if !fresh[m.ev.id] {
			continue // processed before, or a second copy in this batch
		}
		delete(fresh, m.ev.id)
		if err := handle(m.ctx, btx, m.delivery(1)); err != nil {
			return i, err
		}
	}
	return -1, commit(ctx)
}
