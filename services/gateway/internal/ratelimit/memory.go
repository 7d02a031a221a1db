package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is a Limiter whose counters live in this process and prune themselves: what a single
// gateway runs with (RATE_LIMIT_STORE=memory, the default) and what unit tests use. Several
// gateways would each count on their own, so they share Redis instead.
type Memory struct {
	now func() time.Time

	mu       sync.Mutex
	counters map[string]memCounter
	hits     int
}

type memCounter struct {
	start time.Time
	n     int64
}

// NewMemory makes an in-process limiter reading the time from now (time.Now when nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, counters: map[string]memCounter{}}
}

// Hit implements Limiter.
func (m *Memory) Hit(_ context.Context, key string, window time.Duration) (Count, error) {
	return m.count(key, window, 1), nil
}

// Peek implements Limiter.
func (m *Memory) Peek(_ context.Context, key string, window time.Duration) (Count, error) {
	return m.count(key, window, 0), nil
}

func (m *Memory) count(key string, window time.Duration, add int64) Count {
	now := m.now()
	start := now.Truncate(window) // time.Time's zero is a whole number of minutes before the epoch
	k := key + "\x00" + window.String()

	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters[k]
	if !c.start.Equal(start) {
		c = memCounter{start: start}
	}
	c.n += add
	if add > 0 {
		m.counters[k] = c
		m.hits++
		if m.hits%4096 == 0 {
			m.prune(now)
		}
	}
	return Count{N: c.n, ResetIn: start.Add(window).Sub(now)}
}

// prune drops counters of windows long past; a day covers every window the gateway uses.
func (m *Memory) prune(now time.Time) {
	for k, c := range m.counters {
		if now.Sub(c.start) > 24*time.Hour {
			delete(m.counters, k)
		}
	}
}
