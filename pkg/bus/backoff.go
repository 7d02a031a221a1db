package bus

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is an exponential delay with jitter, for redialling and resubscribing: many
// processes losing the broker at once should not come back in lockstep.
type backoff struct {
	base, max time.Duration
	next      time.Duration
}

// sleep waits for the next delay; false if ctx ended first.
func (b *backoff) sleep(ctx context.Context) bool { return sleepCtx(ctx, b.delay()) }

// delay is the next delay: the last one doubled, capped, with up to half taken off at random.
func (b *backoff) delay() time.Duration {
	if b.next == 0 {
		b.next = b.base
	}
	d := b.next/2 + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	return d
}

func (b *backoff) reset() { b.next = 0 }

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
