package cowmap

import (
	"fmt"
	"sync"
	"testing"
)

// A zero Map is empty and ready; puts, deletes and a replacement by New read back, and a
// reader that holds a value while a writer changes the map is never disturbed.
func TestMapReadsBackWhatWasWritten(t *testing.T) {
	var m Map[int]
	if _, ok := m.Get("a"); ok || m.Len() != 0 {
		t.Fatal("a zero map is not empty")
	}
	for i := range 5000 {
		m.Put(fmt.Sprint(i), i)
	}
	m.Delete("7")
	m.Delete("not there")
	if v, ok := m.Get("4999"); !ok || v != 4999 {
		t.Fatalf("Get: %d %v", v, ok)
	}
	if _, ok := m.Get("7"); ok || m.Len() != 4999 {
		t.Fatalf("after Delete: len %d", m.Len())
	}
	sum := 0
	m.Range(func(_ string, v int) { sum += v })
	if want := 4999*5000/2 - 7; sum != want {
		t.Fatalf("Range summed %d, want %d", sum, want)
	}
	n := New(map[string]int{"x": 1, "y": 2})
	if v, _ := n.Get("y"); v != 2 || n.Len() != 2 {
		t.Fatal("New lost an entry")
	}
}

// Readers run while one writer writes (go test -race): they see each key whole.
func TestMapReadersDoNotLock(t *testing.T) {
	var m Map[string]
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if v, ok := m.Get("k"); ok && v != "v1" && v != "v2" {
					t.Errorf("read %q", v)
					return
				}
			}
		}()
	}
	for i := range 2000 {
		m.Put("k", []string{"v1", "v2"}[i%2])
		m.Put(fmt.Sprint(i), "other")
	}
	close(stop)
	wg.Wait()
}
