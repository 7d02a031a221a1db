// Package accountview keeps identity's answer to GET /api/account for each account, so the
// gateway answers the most frequent authenticated read without a hop to identity and a
// Postgres read. Identity stays the owner: the gateway keeps only what identity answered,
// keyed by the account the caller's token resolved to, and drops it when identity says the
// account changed (identity.account.updated, on a change of region or of plan), when this
// gateway forwards a change of the account, and whenever it may have missed an event.
package accountview

import (
	"context"
	"math/rand/v2"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/gateway/internal/fresh"
)

// MaxBody is the largest answer kept; an account is a few hundred bytes.
const MaxBody = 16 << 10

// maxEntries bounds the memory held (well under 1 KiB an entry); past it, accounts are read
// from identity until the sweeper makes room.
const maxEntries = 100_000

// View is one kept answer.
type View struct {
	ContentType string
	Body        []byte
}

// Cache holds views briefly. As with the token cache, a read of identity that began before
// an eviction is not kept (fresh.Map's generation).
type Cache struct {
	ttl   time.Duration
	views *fresh.Map[string, View]
}

// New keeps each view for ttl at most; 0 keeps nothing.
func New(ttl time.Duration) *Cache {
	return &Cache{ttl: ttl, views: fresh.New[string, View](maxEntries)}
}

// Get returns the view kept for accountID, if still fresh at now.
func (c *Cache) Get(accountID string, now time.Time) (View, bool) { return c.views.Get(accountID, now) }

// Generation is read before asking identity and passed to Put.
func (c *Cache) Generation() uint64 { return c.views.Generation() }

// Put keeps v for accountID from now, unless anything was evicted since gen was read.
func (c *Cache) Put(accountID string, v View, now time.Time, gen uint64) {
	if c.ttl <= 0 || len(v.Body) > MaxBody {
		return
	}
	// Less up to a fifth at random, so views kept together do not all expire together.
	c.views.Put(accountID, v, now.Add(c.ttl-rand.N(c.ttl/5+1)), gen, nil)
}

// Evict drops the view of accountID.
func (c *Cache) Evict(accountID string) { c.views.Evict(accountID) }

// Flush drops every view, for when a change may have been missed.
func (c *Cache) Flush() { c.views.Flush() }

// Sweep drops views that are no longer fresh at now, returning how many.
func (c *Cache) Sweep(now time.Time) int { return c.views.Sweep(now, nil) }

// SweepJob drops stale views every minute: they are never served (Get checks the time), so
// sweeping only bounds the memory they hold.
func (c *Cache) SweepJob() lifecycle.Job {
	return lifecycle.Job{Name: "sweep account views", Every: time.Minute, Run: func(context.Context) (int64, error) {
		return int64(c.Sweep(time.Now())), nil
	}}
}
