package edgecount

import (
	"context"
	"sync"
	"testing"
	"time"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

// The next flush comes after the interval, or just past the minute's turn when that is
// sooner, so each minute's last counts leave with the turn.
func TestFlushWaitsForTheTurnOrTheInterval(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 5, 0, time.UTC)
	f := &Flusher{Now: func() time.Time { return now }}
	if w := f.wait(10 * time.Second); w != 10*time.Second {
		t.Fatalf("at :05 wait %v, want the interval", w)
	}
	now = now.Add(52 * time.Second) // :57
	if w := f.wait(10 * time.Second); w != 3*time.Second+turnDelay {
		t.Fatalf("at :57 wait %v, want 3s to the turn and %v", w, turnDelay)
	}
}

// At shutdown the flusher waits for the edge to finish its requests in flight, then writes
// what they added.
func TestRunFlushesAfterTheLastRequest(t *testing.T) {
	c := &Counter{}
	var mu sync.Mutex
	var written []*zonev1.AppMetrics
	drained := make(chan struct{})
	f := &Flusher{Counter: c, Zone: "z", Interval: time.Minute, Drained: drained, DrainWait: 5 * time.Second,
		Publish: func(_ context.Context, m *zonev1.AppMetrics) error {
			mu.Lock()
			defer mu.Unlock()
			written = append(written, m)
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	cancel()
	// A request in flight at the stop ends afterwards.
	time.Sleep(50 * time.Millisecond)
	c.Observe("app", 200, time.Millisecond, time.Now())
	close(drained)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var n int64
	for _, m := range written {
		for _, a := range m.GetRequests() {
			n += a.GetByStatusClass()[1]
		}
	}
	if n != 1 {
		t.Fatalf("shutdown flush reported %d requests, want the one that ended after the stop", n)
	}
}

// An app without a request for idleMinutes is dropped from the map; a request that found its
// counters just before is still reported by the next collection, and the app counts anew
// when it is asked again.
func TestIdleAppsAreDropped(t *testing.T) {
	var c Counter
	m0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	c.Observe("app", 200, time.Millisecond, m0)
	c.Collect(m0.Add(time.Second))
	stale := c.app("app") // a request in flight holds the counters
	if ms := c.Collect(m0.Add(5 * time.Minute)); len(ms) != 0 {
		t.Fatalf("idle collection %v", ms)
	}
	if c.apps.Len() != 1 {
		t.Fatal("dropped before idleMinutes")
	}
	at := m0.Add(idleMinutes * time.Minute)
	c.Collect(at)
	if c.apps.Len() != 0 {
		t.Fatal("an app idle for idleMinutes kept")
	}
	stale.slots[minuteOf(at)&1].classes[1].Add(1)
	ms := c.Collect(at.Add(time.Second))
	if len(ms) != 1 || ms[0].Apps[0].AppId != "app" || ms[0].Apps[0].ByStatusClass[1] != 1 {
		t.Fatalf("the request on dropped counters: %v", ms)
	}
	c.Observe("app", 404, time.Millisecond, at.Add(2*time.Second))
	ms = c.Collect(at.Add(3 * time.Second))
	if len(ms) != 1 || ms[0].Apps[0].ByStatusClass[3] != 1 || ms[0].Apps[0].ByStatusClass[1] != 0 {
		t.Fatalf("after the drop: %v", ms)
	}
}
