package usecase

import (
	"strings"
	"sync"
)

// recentTargetsMax bounds the remembered slugs; past it they are all forgotten at once,
// which costs the next read of each one round trip more, nothing else.
const recentTargetsMax = 10_000

// recentTargets remembers what each caller's slug last resolved to. It is a guess, never
// an answer: Reader.readGuessed checks it against the store in the same round trip as the
// page, so it needs no invalidation and may be stale on any copy of the service.
type recentTargets struct {
	mu  sync.Mutex
	max int
	m   map[recentKey]Target
}

type recentKey struct{ accountID, slug string }

func newRecentTargets(max int) *recentTargets {
	return &recentTargets{max: max, m: map[recentKey]Target{}}
}

func (r *recentTargets) get(accountID, slug string) (Target, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.m[recentKey{accountID, slug}]
	return t, ok
}

func (r *recentTargets) put(accountID, slug string, t Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= r.max {
		clear(r.m)
	}
	// Copies: the route's strings may alias the server's reused request buffers.
	r.m[recentKey{strings.Clone(accountID), strings.Clone(slug)}] = t
}

func (r *recentTargets) forget(accountID, slug string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, recentKey{accountID, slug})
}
