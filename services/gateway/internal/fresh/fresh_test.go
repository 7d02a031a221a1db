package fresh

import (
	"testing"
	"time"
)

func TestEntriesLiveUntilTheirTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	m := New[string, int](10)
	if !m.Put("a", 1, now.Add(time.Second), m.Generation(), nil) {
		t.Fatal("not kept")
	}
	if v, ok := m.Get("a", now.Add(999*time.Millisecond)); !ok || v != 1 {
		t.Fatalf("fresh entry: %v %v", v, ok)
	}
	if _, ok := m.Get("a", now.Add(time.Second)); ok {
		t.Fatal("served at its end")
	}
	var dropped []string
	if n := m.Sweep(now.Add(time.Second), func(k string, _ int) { dropped = append(dropped, k) }); n != 1 || len(dropped) != 1 || m.Len() != 0 {
		t.Fatalf("swept %d (%v), %d left", n, dropped, m.Len())
	}
}

func TestAnEvictionBeatsAReadThatBeganBeforeIt(t *testing.T) {
	now := time.Now()
	m := New[string, int](10)
	for name, drop := range map[string]func(){"evict": func() { m.Evict("other") }, "evict none": func() { m.Evict() }, "flush": m.Flush} {
		gen := m.Generation()
		drop()
		if m.Put("a", 1, now.Add(time.Minute), gen, nil) {
			t.Fatalf("%s: a value read before it was kept", name)
		}
	}
	// Delete supersedes without advancing: a read in flight may still be kept.
	gen := m.Generation()
	m.Delete("b")
	if !m.Put("a", 2, now.Add(time.Minute), gen, nil) {
		t.Fatal("Delete advanced the generation")
	}
	m.Evict("a")
	if _, ok := m.Get("a", now); ok {
		t.Fatal("an evicted entry served")
	}
}

func TestAFullMapKeepsNothingNewAndReplacingReportsTheOldValue(t *testing.T) {
	now := time.Now()
	m := New[int, string](2)
	m.Put(1, "one", now.Add(time.Minute), m.Generation(), nil)
	var old string
	if !m.Put(1, "uno", now.Add(time.Minute), m.Generation(), func(o string) { old = o }) || old != "one" {
		t.Fatalf("replacing: old %q", old)
	}
	m.Put(2, "two", now.Add(time.Minute), m.Generation(), nil)
	if m.Put(3, "three", now.Add(time.Minute), m.Generation(), nil) || m.Len() != 2 {
		t.Fatalf("kept past the bound: %d entries", m.Len())
	}
}

// Sweep drops what is due and keeps the rest, whatever happened to a key since it was put:
// put again for longer, deleted, evicted, or put for less time than the key before it.
func TestSweepDropsWhatIsDueAndOnlyThat(t *testing.T) {
	m := New[string, int](100)
	t0 := time.Now()
	put := func(k string, v int, ttl time.Duration) {
		t.Helper()
		if !m.Put(k, v, t0.Add(ttl), m.Generation(), nil) {
			t.Fatalf("%s not kept", k)
		}
	}
	put("short", 1, time.Second)
	put("renewed", 2, time.Second)
	put("deleted", 3, time.Second)
	put("long", 4, time.Hour)
	put("sooner", 5, 2*time.Second) // behind "long": waits for it
	put("renewed", 22, time.Hour)
	m.Delete("deleted")

	var dropped []string
	if n := m.Sweep(t0.Add(time.Minute), func(k string, _ int) { dropped = append(dropped, k) }); n != 1 || len(dropped) != 1 || dropped[0] != "short" {
		t.Fatalf("swept %d %v, want only short", n, dropped)
	}
	if v, ok := m.Get("renewed", t0.Add(time.Minute)); !ok || v != 22 {
		t.Fatalf("renewed: %d %v", v, ok)
	}
	if m.Len() != 3 { // renewed, long, and sooner (stale, never served, swept after long)
		t.Fatalf("%d entries left, want 3", m.Len())
	}
	if _, ok := m.Get("sooner", t0.Add(time.Minute)); ok {
		t.Fatal("a stale entry was served")
	}
	if n := m.Sweep(t0.Add(2*time.Hour), nil); n != 3 || m.Len() != 0 {
		t.Fatalf("swept %d, %d left; want all 3 gone", n, m.Len())
	}
	// Nothing due is left to look at: the next sweep looks at nothing.
	if len(m.due) != 0 {
		t.Fatalf("%d keys still listed as due", len(m.due))
	}
}

// A sweep of a full map costs what it drops: keys not yet due are not walked, and a large
// sweep goes a batch at a time.
func TestSweepLooksOnlyAtDueKeys(t *testing.T) {
	const n = 3 * sweepBatch
	m := New[int, int](2 * n)
	t0 := time.Now()
	for i := range n {
		m.Put(i, i, t0.Add(time.Second), m.Generation(), nil)
	}
	for i := n; i < 2*n; i++ {
		m.Put(i, i, t0.Add(time.Hour), m.Generation(), nil)
	}
	went, more := m.sweepBatch(t0.Add(time.Minute), nil)
	if went != sweepBatch || !more {
		t.Fatalf("one batch dropped %d (more %v), want %d and more", went, more, sweepBatch)
	}
	if got := m.Sweep(t0.Add(time.Minute), nil); got != n-sweepBatch {
		t.Fatalf("the rest of the sweep dropped %d, want %d", got, n-sweepBatch)
	}
	if m.Len() != n || m.head != 0 || len(m.due) != n {
		t.Fatalf("%d entries, due %d from %d; want the %d not yet due", m.Len(), len(m.due), m.head, n)
	}
}

// BenchmarkSweepOfAFullMap is the sweep of a full token cache of which nothing is due: it
// held the lock over all 200,000 entries (75 ms) before the due list.
func BenchmarkSweepOfAFullMap(b *testing.B) {
	const n = 200_000
	m := New[[32]byte, [200]byte](n)
	now := time.Now()
	for i := range n {
		var k [32]byte
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		m.Put(k, [200]byte{}, now.Add(time.Hour), m.Generation(), nil)
	}
	b.ResetTimer()
	for range b.N {
		m.Sweep(now, nil)
	}
}
