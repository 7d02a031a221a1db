package logstreams

import (
	"context"
	"sync"
	"time"
)

// Lease is one open stream's hold on one of its account's places.
type Lease struct {
	Account string
	ID      string // random, one per stream
}

// Places counts the streams each account holds open, where every gateway that must agree on
// the cap sees them: this process (Memory, one gateway) or Redis (RedisPlaces, shared by all).
// Leases expire after ttl unless renewed, so places held by a gateway that died come back by
// themselves.
type Places interface {
	// Take holds one of lease.Account's max places for ttl; false when all are held.
	Take(ctx context.Context, lease Lease, max int, ttl time.Duration) (bool, error)
	// Renew extends every lease by ttl from now, holding it again if it had lapsed.
	Renew(ctx context.Context, leases []Lease, ttl time.Duration) error
	// Free gives the lease's place back.
	Free(ctx context.Context, lease Lease) error
}

// Memory is Places in this process: what a single gateway (RATE_LIMIT_STORE=memory) counts
// with. Its leases never lapse: they die with the process that holds them.
type Memory struct {
	mu   sync.Mutex
	held map[string]map[string]struct{} // account -> lease ids
}

// NewMemory makes empty in-process places.
func NewMemory() *Memory { return &Memory{held: map[string]map[string]struct{}{}} }

// Take implements Places.
func (m *Memory) Take(_ context.Context, l Lease, max int, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.held[l.Account]
	if len(ids) >= max {
		return false, nil
	}
	if ids == nil {
		ids = map[string]struct{}{}
		m.held[l.Account] = ids
	}
	ids[l.ID] = struct{}{}
	return true, nil
}

// Renew implements Places: memory leases do not lapse.
func (m *Memory) Renew(context.Context, []Lease, time.Duration) error { return nil }

// Free implements Places.
func (m *Memory) Free(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.held[l.Account], l.ID)
	if len(m.held[l.Account]) == 0 {
		delete(m.held, l.Account)
	}
	return nil
}
