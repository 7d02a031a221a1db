package auth

import (
	"context"
	"sync"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/lifecycle"
)

// Hash is a token's SHA-256. The cache never holds a token itself, so a heap dump of the
// gateway yields nothing that authenticates.
type Hash = [32]byte

// maxEntries bounds the cache's memory (about 200 bytes an entry); past it, new tokens are
// introspected every time until the sweeper makes room.
const maxEntries = 200_000

// Cache remembers valid tokens briefly. Every eviction and flush advances a generation, and an
// introspection that began in an older generation is not cached: otherwise a revocation
// arriving while identity's "valid" answer was in flight would be undone by caching it.
type Cache struct {
	mu     sync.RWMutex
	gen    uint64
	byHash map[Hash]entry
	byID   map[string]Hash
}

type entry struct {
	caller callerid.Caller
	until  time.Time
}

// NewCache makes an empty cache.
func NewCache() *Cache {
	return &Cache{byHash: map[Hash]entry{}, byID: map[string]Hash{}}
}

// Get returns the caller cached for h, if still fresh at now.
func (c *Cache) Get(h Hash, now time.Time) (callerid.Caller, bool) {
	c.mu.RLock()
	e, ok := c.byHash[h]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return callerid.Caller{}, false
	}
	return e.caller, true
}

// Generation is read before introspecting and passed to Put.
func (c *Cache) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// Put caches caller for h until until, unless anything was evicted since gen was read.
func (c *Cache) Put(h Hash, caller callerid.Caller, until time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || len(c.byHash) >= maxEntries {
		return
	}
	if old, ok := c.byID[caller.TokenID]; ok && old != h {
		delete(c.byHash, old)
	}
	c.byHash[h] = entry{caller: caller, until: until}
	c.byID[caller.TokenID] = h
}

// Evict drops the token with the given id.
func (c *Cache) Evict(tokenID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if h, ok := c.byID[tokenID]; ok {
		delete(c.byHash, h)
		delete(c.byID, tokenID)
	}
}

// Flush drops everything, for when revocations may have been missed.
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.byHash)
	clear(c.byID)
}

// Sweep drops entries that are no longer fresh at now, returning how many.
func (c *Cache) Sweep(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for h, e := range c.byHash {
		if !now.Before(e.until) {
			delete(c.byHash, h)
			if c.byID[e.caller.TokenID] == h {
				delete(c.byID, e.caller.TokenID)
			}
			n++
		}
	}
	return n
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
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byHash)
}
