package auth

import (
	"context"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"tori.dev/pkg/bus"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
)

// RevokedKey is the routing key identity publishes a revoked token under.
const RevokedKey = "identity.token.revoked"

// Bus is the part of *bus.Conn the revocation listener needs.
type Bus interface {
	Connected() bool
	Listen(ctx context.Context, keys []string, fn func(ctx context.Context, d bus.Delivery) error) error
}

// timings of the trust rules; tests shorten them.
type timings struct {
	// watchEvery is how often the connection's state is checked between requests.
	watchEvery time.Duration
	// grace is how long after (re)connecting the cache stays unused: the listener's queue may
	// not be bound yet, and a revocation published meanwhile would be missed.
	grace time.Duration
	// relistenAfter is the pause before listening again when Listen fails.
	relistenAfter time.Duration
}

var defaultTimings = timings{watchEvery: 100 * time.Millisecond, grace: time.Second, relistenAfter: time.Second}

const never = math.MaxInt64

// Revocations evicts revoked tokens from the cache and says when the cache can be trusted:
// only while this instance is connected to the bus and listening, because only then does it
// hear every revocation. On any doubt the cache is flushed and every token re-introspected.
type Revocations struct {
	bus     Bus
	cache   *Cache
	log     *slog.Logger
	timings timings

	listening   atomic.Bool
	trustedFrom atomic.Int64 // unix nanoseconds; never while in doubt
}

// NewRevocations watches b for revocations evicting from cache.
func NewRevocations(b Bus, cache *Cache, log *slog.Logger) *Revocations {
	r := &Revocations{bus: b, cache: cache, log: log, timings: defaultTimings}
	r.trustedFrom.Store(never)
	return r
}

// Trusted reports whether cached answers may be used at now.
func (r *Revocations) Trusted(now time.Time) bool {
	if !r.bus.Connected() || !r.listening.Load() {
		r.distrust()
		return false
	}
	return now.UnixNano() >= r.trustedFrom.Load()
}

// Run listens and watches until ctx ends.
func (r *Revocations) Run(ctx context.Context) {
	go r.watch(ctx)
	for ctx.Err() == nil {
		r.listening.Store(true)
		err := r.bus.Listen(ctx, []string{RevokedKey}, r.handle)
		r.listening.Store(false)
		r.distrust()
		if ctx.Err() != nil {
			return
		}
		r.log.ErrorContext(ctx, "revocation listener stopped; token cache off until it is back", "err", errString(err))
		select {
		case <-ctx.Done():
		case <-time.After(r.timings.relistenAfter):
		}
	}
}

func (r *Revocations) handle(ctx context.Context, d bus.Delivery) error {
	var ev identityv1.TokenRevoked
	if err := d.Decode(&ev); err != nil {
		// Unreadable: the token it named cannot be found, so drop everything to be safe.
		r.log.ErrorContext(ctx, "undecodable revocation; flushing token cache", "err", err.Error())
		r.cache.Flush()
		return nil
	}
	r.cache.Evict(ev.GetTokenId())
	return nil
}

// watch flushes the cache as soon as the connection is lost, and trusts it again a grace
// period after it is back.
func (r *Revocations) watch(ctx context.Context) {
	t := time.NewTicker(r.timings.watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !r.bus.Connected() || !r.listening.Load() {
				r.distrust()
				continue
			}
			if r.trustedFrom.Load() == never {
				r.cache.Flush()
				r.trustedFrom.CompareAndSwap(never, time.Now().Add(r.timings.grace).UnixNano())
			}
		}
	}
}

// distrust stops cache use and drops what it holds, once per loss.
func (r *Revocations) distrust() {
	if r.trustedFrom.Swap(never) != never {
		r.cache.Flush()
	}
}

func errString(err error) string {
	if err == nil {
		return "listen returned"
	}
	return err.Error()
}
