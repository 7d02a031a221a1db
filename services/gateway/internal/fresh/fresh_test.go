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
