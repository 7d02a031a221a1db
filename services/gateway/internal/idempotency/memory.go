package idempotency

import (
	"context"
	"crypto/rand"
	"sync"
	"time"
)

// Memory is a Store in one process, for tests of what uses a store.
type Memory struct {
	mu   sync.Mutex
	now  func() time.Time
	keys map[string]*memRecord
}

type memRecord struct {
	Record
	owner   string
	created time.Time
}

// NewMemory keeps records in memory, reading the time from now.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{now: now, keys: map[string]*memRecord{}}
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, keyHash []byte, lease time.Duration) (Claim, bool, Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	r, ok := m.keys[string(keyHash)]
	if ok && !(r.Running && r.LeaseUntil.Before(now)) && !r.created.Before(now.Add(-TTL)) {
		return Claim{}, false, r.Record, nil
	}
	owner := make([]byte, 16)
	_, _ = rand.Read(owner)
	m.keys[string(keyHash)] = &memRecord{Record: Record{Running: true, LeaseUntil: now.Add(lease)}, owner: string(owner), created: now}
	return Claim{KeyHash: keyHash, Owner: owner}, true, Record{}, nil
}

func (m *Memory) held(c Claim) *memRecord {
	r, ok := m.keys[string(c.KeyHash)]
	if !ok || r.owner != string(c.Owner) || !r.Running {
		return nil
	}
	return r
}

// Renew implements Store.
func (m *Memory) Renew(_ context.Context, c Claim, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.held(c)
	if r == nil {
		return ErrLost
	}
	r.LeaseUntil = m.now().Add(lease)
	return nil
}

// Finish implements Store.
func (m *Memory) Finish(_ context.Context, c Claim, a Answer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.held(c)
	if r == nil {
		return ErrLost
	}
	r.Record = Record{RequestHash: a.RequestHash, Status: a.Status, ContentType: a.ContentType, Body: a.Body, TooLarge: a.TooLarge}
	return nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, c Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held(c) != nil {
		delete(m.keys, string(c.KeyHash))
	}
	return nil
}

// Prune implements Store.
func (m *Memory) Prune(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, r := range m.keys {
		if r.created.Before(m.now().Add(-TTL)) {
			delete(m.keys, k)
			n++
		}
	}
	return n, nil
}
