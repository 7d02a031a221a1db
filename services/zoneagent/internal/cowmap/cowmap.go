// Package cowmap is a string-keyed map for a hot read path: reads never lock, and a write
// copies one of 1024 shards, not the whole map.
package cowmap

import (
	"hash/maphash"
	"maps"
	"sync/atomic"
)

// shardCount splits a map so that a write copies one shard, about 1/1024 of the
// map: a deploy at 10,000 apps copies some ten entries, not the whole table (at 100,000,
// a hundred: still microseconds). Empty shards cost a pointer each.
const shardCount = 1024

// shardSeed hashes keys to shards; one per process is enough (shards are never shared).
var shardSeed = maphash.MakeSeed()

// Map is a copy-on-write map whose readers never lock: each shard is an immutable map behind
// an atomic pointer, and a writer (the caller serializes writers) installs a copy of the one
// shard it changes. A reader sees each key before or after a write, never a half-written
// map. Its zero value is empty and ready.
type Map[V any] struct {
	shards [shardCount]atomic.Pointer[map[string]V]
}

// New fills a map from m in one go (a replace builds a new one and swaps it in).
func New[V any](m map[string]V) *Map[V] {
	s := &Map[V]{}
	var parts [shardCount]map[string]V
	for k, v := range m {
		i := shardOf(k)
		if parts[i] == nil {
			parts[i] = map[string]V{}
		}
		parts[i][k] = v
	}
	for i := range parts {
		if parts[i] != nil {
			s.shards[i].Store(&parts[i])
		}
	}
	return s
}

func shardOf(key string) int { return int(maphash.String(shardSeed, key) % shardCount) }

// Get reads without locking.
func (s *Map[V]) Get(key string) (V, bool) {
	if p := s.shards[shardOf(key)].Load(); p != nil {
		v, ok := (*p)[key]
		return v, ok
	}
	var zero V
	return zero, false
}

// Put sets key; the caller serializes writers.
func (s *Map[V]) Put(key string, v V) {
	sh := &s.shards[shardOf(key)]
	var next map[string]V
	if p := sh.Load(); p != nil {
		next = make(map[string]V, len(*p)+1)
		maps.Copy(next, *p)
	} else {
		next = make(map[string]V, 1)
	}
	next[key] = v
	sh.Store(&next)
}

// Delete removes key; the caller serializes writers.
func (s *Map[V]) Delete(key string) {
	sh := &s.shards[shardOf(key)]
	p := sh.Load()
	if p == nil {
		return
	}
	if _, ok := (*p)[key]; !ok {
		return
	}
	next := maps.Clone(*p)
	delete(next, key)
	sh.Store(&next)
}

// Range calls fn for every entry, shard by shard (a snapshot of each shard, not of the map).
func (s *Map[V]) Range(fn func(string, V)) {
	for i := range s.shards {
		if p := s.shards[i].Load(); p != nil {
			for k, v := range *p {
				fn(k, v)
			}
		}
	}
}

// Len counts the entries (a follower's first view, tests).
func (s *Map[V]) Len() int {
	n := 0
	for i := range s.shards {
		if p := s.shards[i].Load(); p != nil {
			n += len(*p)
		}
	}
	return n
}
