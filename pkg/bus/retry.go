package bus

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The bus's retry policy, in one place: a handler's failed attempt is tried again after
// retryDelay (Config.BaseBackoff doubling per attempt, capped at maxRetryDelay), up to
// Config.MaxAttempts attempts in all; an error marked Permanent, or a refusal (owner.go), is
// not tried again. The bus's own trouble (the database away: infraError) is retried with a
// jittered backoff without counting against the attempts. What is not retried is handed to
// the dead-letter step (deadletter.go). Listeners (listen.go) follow the same policy in memory,
// giving up with a log line instead of a dead letter.

// givesUp reports whether a failure with err on attempt is not tried again: consumers and
// listeners (listen.go) alike.
func givesUp(err error, attempt, maxAttempts int) bool {
	return IsPermanent(err) || attempt >= maxAttempts
}

// maxRetryDelay caps a consumer's wait between attempts.
const maxRetryDelay = 30 * time.Second

// retryDelay is a consumer's wait before attempt+1: base doubling per attempt, capped.
func retryDelay(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

type retryPolicy struct {
	maxAttempts int
	base        time.Duration
	// wait pauses before m is tried again; false when the session or ctx ended first.
	wait    func(ctx context.Context, m *message, d time.Duration) bool
	retried prometheus.Counter // counts each retry of a handler's failure
}

// verdict is how retrying ended for one event.
type verdict struct {
	err      error // nil: handled (or a duplicate); otherwise the reason to dead-letter it
	attempts int   // attempts made
	refused  bool  // err is a refusal: no attempt was made
	left     bool  // the session or ctx ended first: left for redelivery
}

type retryFunc func(ctx context.Context, m *message, failed int, err error) verdict

// retrying is try under policy p: from failed attempts already failed (the last with err), it
// tries m until it succeeds, fails for good, or the session ends.
func retrying(p retryPolicy, try tryFunc) retryFunc {
	return func(ctx context.Context, m *message, failed int, err error) verdict {
		infra := backoff{base: p.base, max: maxRetryDelay}
		attempt := failed
		for {
			if err != nil {
				var r refusal
				if errors.As(err, &r) {
					return verdict{err: r.error, refused: true}
				}
				m.span.RecordError(err)
				if givesUp(err, attempt, p.maxAttempts) {
					return verdict{err: err, attempts: attempt}
				}
				delay := retryDelay(p.base, attempt)
				m.log().InfoContext(m.ctx, "bus handler failed; retrying", "attempt", attempt, "retry_in", delay, "err", err)
				p.retried.Inc()
				if !p.wait(ctx, m, delay) {
					return verdict{left: true}
				}
			}
			attempt++
			for {
				err = try(m.ctx, m, attempt)
				var ie infraError
				if !errors.As(err, &ie) {
					break
				}
				m.log().WarnContext(m.ctx, "bus consumer cannot record message; retrying", "err", err)
				if !p.wait(ctx, m, infra.delay()) {
					return verdict{left: true}
				}
			}
			if err == nil {
				return verdict{attempts: attempt}
			}
			if ctx.Err() != nil {
				return verdict{left: true} // shutting down: unacknowledged, so redelivered to whoever runs next
			}
		}
	}
}
