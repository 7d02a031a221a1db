package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// An event's way from delivery to its end is a chain of small steps, each wrapping the next
// and adding one concern, as HTTP middleware does:
//
//	deadLettering   a final failure parks the event in the dead-letter queue   (deadletter.go)
//	 retrying       failed attempts are tried again with backoff; Permanent    (retry.go)
//	                and refusals are not
//	  ownerChecked  an event without an id, from a publisher that does not     (owner.go)
//	                own its routing key, or from an unreadable bundle is refused
//	   inTransaction  one attempt in a transaction of its own, committed        (pipeline.go)
//	    deduplicated  the event's id recorded in processed_messages; a         (dedup.go)
//	                  duplicate commits nothing else
//	     recovering   a panicking handler becomes an error, retried as any     (recover.go)
//	      Subscription.Handle
//
// With Subscription.Batch, a batch goes through the inner two steps for many events in one
// transaction first, and only the events of a failed batch take the whole chain (batch.go).

// tryFunc makes attempt number n at m's effect: nil when it is done (or was done before).
type tryFunc func(ctx context.Context, m *message, n int) error

// settleFunc takes m to an end: failed attempts have already failed, the last with err.
type settleFunc func(ctx context.Context, m *message, failed int, err error) outcome

// pipeline is the chain above for this session.
func (s *consumeSession) pipeline() settleFunc {
	try := inTransaction(s.pool, deduplicated(s.queue, recovering(s.sub.Handle)))
	retry := retrying(retryPolicy{
		maxAttempts: s.conn.cfg.MaxAttempts,
		base:        s.conn.cfg.BaseBackoff,
		wait:        func(ctx context.Context, m *message, d time.Duration) bool { return s.sleep(ctx, m.carrier, d) },
		retried:     retriedEvents.WithLabelValues(s.queueLabel()),
	}, ownerChecked(s.conn.owns, try))
	return deadLettering(s.deadLetter, retry)
}

// inTransaction runs h once in a transaction of its own and commits it. A failed commit may
// be the handler's doing (a deferred constraint), so it counts as a failed attempt.
func inTransaction(pool *pgxpool.Pool, h TxHandler) tryFunc {
	return func(ctx context.Context, m *message, n int) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return infraError{fmt.Errorf("bus: begin: %w", err)}
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		btx, commit := committing(tx)
		if err := h(ctx, btx, m.delivery(n)); err != nil {
			return err
		}
		return commit(ctx)
	}
}
