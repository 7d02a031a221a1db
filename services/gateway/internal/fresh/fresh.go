// Package fresh is the gateway's short-lived memory of other services' answers: a map whose
// entries live until a given time, bounded in size, with a generation that every eviction
// advances. An answer read from its owner while an eviction happened is not kept: otherwise
// a revocation or change announced while the older answer was in flight would be undone by
// keeping it. The token cache and the account copy are built on it.
package fresh

import (
	"sync"
	"time"
)

// sweepBatch is how many keys Sweep looks at per hold of the lock: a sweep of a full map
// never stops reads for longer than a batch takes (tens of microseconds).
const sweepBatch = 1024

// Map holds values by key until their time.
type Map[K comparable, V any] struct {
	mu      sync.RWMutex
	gen     uint64
	max     int
	entries map[K]entry[V]
	// due lists the keys in the order they were put, each with the time it was put until, so
	// that Sweep looks at the entries that are due rather than at every entry: walking the
	// whole map under the lock stopped every read of a full token cache for 75 ms a minute.
	due  []dueKey[K]
	head int // due[:head] are swept
}

type entry[V any] struct {
	value V
	until time.Time
}

type dueKey[K comparable] struct {
	key   K
	until time.Time
}

// New makes an empty map of at most max entries; past it, Put keeps nothing until Sweep
// makes room.
func New[K comparable, V any](max int) *Map[K, V] {
	return &Map[K, V]{max: max, entries: map[K]entry[V]{}}
}

// Get returns the value kept for k, if still fresh at now.
func (m *Map[K, V]) Get(k K, now time.Time) (V, bool) {
	m.mu.RLock()
	e, ok := m.entries[k]
	m.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Peek returns the value kept for k whether or not it is still fresh (until Sweep drops it),
// for bookkeeping and for telling why an entry went stale; never to serve it.
func (m *Map[K, V]) Peek(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.entries[k]
	return e.value, ok
}

// Generation is read before asking the owner and passed to Put.
func (m *Map[K, V]) Generation() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.gen
}

// Put keeps v for k until until, unless anything was evicted since gen was read or the map
// is full; it reports whether v was kept. replaced, when not nil, is called (under the map's
// lock) with the value v takes the place of.
func (m *Map[K, V]) Put(k K, v V, until time.Time, gen uint64, replaced func(old V)) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen || len(m.entries) >= m.max {
		return false
	}
	if old, ok := m.entries[k]; ok && replaced != nil {
		replaced(old.value)
	}
	m.entries[k] = entry[V]{value: v, until: until}
	m.due = append(m.due, dueKey[K]{key: k, until: until})
	return true
}

// Delete drops k without advancing the generation: for an entry superseded, not revoked.
func (m *Map[K, V]) Delete(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, k)
}

// Evict drops keys and advances the generation, even when it names none that is kept: a
// read of the owner in flight must not be kept after it either.
func (m *Map[K, V]) Evict(keys ...K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	for _, k := range keys {
		delete(m.entries, k)
	}
}

// Flush drops everything and advances the generation, for when an eviction may have been
// missed.
func (m *Map[K, V]) Flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.entries)
	m.due, m.head = nil, 0
}

// Sweep drops entries no longer fresh at now, calling dropped (when not nil, under the map's
// lock) for each, and returns how many went. Stale entries are never served (Get checks the
// time), so sweeping only bounds the memory they hold.
//
// It walks the keys in the order they were put and stops at the first one not yet due, a
// batch at a time, releasing the lock between batches: its cost is the entries that went,
// not the entries kept. An entry put for less time than one put before it (a token that
// ends sooner) waits for that one: at most the longest time any entry is kept.
func (m *Map[K, V]) Sweep(now time.Time, dropped func(k K, v V)) int {
	n := 0
	for {
		went, more := m.sweepBatch(now, dropped)
		n += went
		if !more {
			return n
		}
	}
}

// sweepBatch sweeps up to sweepBatch due keys under one hold of the lock; more says whether
// due keys may be left.
func (m *Map[K, V]) sweepBatch(now time.Time, dropped func(k K, v V)) (went int, more bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for range sweepBatch {
		if m.head == len(m.due) || now.Before(m.due[m.head].until) {
			m.compact()
			return went, false
		}
		d := m.due[m.head]
		m.due[m.head] = dueKey[K]{}
		m.head++
		// The key may have gone (deleted, evicted) or been put again for longer since.
		if e, ok := m.entries[d.key]; ok && !now.Before(e.until) {
			delete(m.entries, d.key)
			if dropped != nil {
				dropped(d.key, e.value)
			}
			went++
		}
	}
	m.compact()
	return went, true
}

// compact gives the swept part of due back once it is most of it.
func (m *Map[K, V]) compact() {
	if m.head > 0 && m.head >= len(m.due)/2 {
		m.due = append(m.due[:0], m.due[m.head:]...)
		m.head = 0
	}
}

// Len is the number of entries, fresh or not yet swept.
func (m *Map[K, V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}
