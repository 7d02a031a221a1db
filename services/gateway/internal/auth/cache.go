package auth

import (
	"context"
	"sync"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/gateway/internal/fresh"
)

// Hash is a token's SHA-256. The cache never holds a token itself, so a heap dump of the
// gateway yields nothing that authenticates.
type Hash = [32]byte

// maxEntries bounds the cache's memory (about 200 bytes an entry); past it, new tokens are
// introspected every time until the sweeper makes room.
const maxEntries = 200_000

// Cache remembers valid tokens briefly, by hash, which hash each token id has, so a
// revocation (which names the id) finds its entry, and which hashes each person has, so a
// change of their memberships (which names the user) finds every token whose cached roles
// it outdates. As fresh.Map does for every eviction, an introspection that began before a
// revocation or a change of roles is not cached.
type Cache struct {
	mu      sync.Mutex // guards byID and byUser, and keeps them in step with callers
	callers *fresh.Map[Hash, Principal]
	byID    map[string]Hash
	byUser  map[string]map[Hash]struct{}
}

// NewCache makes an empty cache.
func NewCache() *Cache {
	return &Cache{callers: fresh.New[Hash, Principal](maxEntries), byID: map[string]Hash{}, byUser: map[string]map[Hash]struct{}{}}
}

// Get returns the principal cached for h, if still fresh at now.
func (c *Cache) Get(h Hash, now time.Time) (Principal, bool) { return c.callers.Get(h, now) }

// Ended returns the principal cached for h when its entry went stale because its token
// reached its end by now (an entry never outlives its token's end), so the gateway can say
// so without asking identity. A stale entry whose time simply ran out is not ended.
func (c *Cache) Ended(h Hash, now time.Time) (Principal, bool) {
	p, ok := c.callers.Peek(h)
	if !ok || !p.expiredAt(now) {
		return Principal{}, false
	}
	return p, true
}

// Generation is read before introspecting and passed to Put.
func (c *Cache) Generation() uint64 { return c.callers.Generation() }

// Put caches caller for h until until, unless anything was evicted since gen was read.
func (c *Cache) Put(h Hash, caller Principal, until time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.callers.Put(h, caller, until, gen, nil) {
		return
	}
	if old, ok := c.byID[caller.TokenID]; ok && old != h {
		c.callers.Delete(old)
		c.unindexUser(caller.UserID, old)
	}
	c.byID[caller.TokenID] = h
	if caller.UserID != "" {
		hs := c.byUser[caller.UserID]
		if hs == nil {
			hs = map[Hash]struct{}{}
			c.byUser[caller.UserID] = hs
		}
		hs[h] = struct{}{}
	}
}

// Evict drops the token with the given id.
func (c *Cache) Evict(tokenID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.byID[tokenID]
	if !ok {
		c.callers.Evict() // nothing cached, but an introspection in flight must not be
		return
	}
	delete(c.byID, tokenID)
	if p, ok := c.callers.Peek(h); ok {
		c.unindexUser(p.UserID, h)
	}
	c.callers.Evict(h)
}

// EvictUser drops every token of the person userID: their roles changed, and each cached
// principal carries the old ones.
func (c *Cache) EvictUser(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hs := c.byUser[userID]
	delete(c.byUser, userID)
	keys := make([]Hash, 0, len(hs))
	for h := range hs {
		if p, ok := c.callers.Peek(h); ok && c.byID[p.TokenID] == h {
			delete(c.byID, p.TokenID)
		}
		keys = append(keys, h)
	}
	c.callers.Evict(keys...) // advances the generation even for none
}

// unindexUser forgets that h is one of userID's tokens; c.mu is held.
func (c *Cache) unindexUser(userID string, h Hash) {
	if hs := c.byUser[userID]; hs != nil {
		delete(hs, h)
		if len(hs) == 0 {
			delete(c.byUser, userID)
		}
	}
}

// Flush drops everything, for when revocations may have been missed.
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callers.Flush()
	clear(c.byID)
	clear(c.byUser)
}

// Sweep drops entries that are no longer fresh at now, returning how many.
func (c *Cache) Sweep(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callers.Sweep(now, func(h Hash, caller Principal) {
		if c.byID[caller.TokenID] == h {
			delete(c.byID, caller.TokenID)
		}
		c.unindexUser(caller.UserID, h)
	})
}

// SweepEvery is how often stale entries are dropped: they are never served (Get checks the
// time), so sweeping only bounds the memory they hold.
const SweepEvery = time.Minute

// SweepJob drops stale entries every SweepEvery.
func (c *Cache) SweepJob() lifecycle.Job {
	return lifecycle.Job{Name: "sweep token cache", Every: SweepEvery, Run: func(context.Context) (int64, error) {
		return int64(c.Sweep(time.Now())), nil
	}}
}

// Len is the number of cached tokens.
func (c *Cache) Len() int { return c.callers.Len() }

// users is the number of people with cached tokens, for tests of the index's upkeep.
func (c *Cache) users() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byUser)
}
