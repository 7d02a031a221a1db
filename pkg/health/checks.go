package health

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// A dependency's probe gets this long; one that has not answered by then counts as down, so
// /readyz answers within it even when the network swallows packets.
var checkTimeout = 2 * time.Second

// One round of probes answers /readyz for this long: a load balancer and an orchestrator
// asking many times a second cost the database one ping each half second, and a loss still
// shows within a second or two (the promise is five).
var checkFresh = 500 * time.Millisecond

// check is one dependency /readyz asks about on every answer, unlike an awaited part, which
// reports once: the database and the broker can go away and come back.
type check struct {
	name  string
	probe func(ctx context.Context) error
}

// checks holds the registered probes and the last round's answer.
type checks struct {
	mu        sync.Mutex // one round at a time; callers meanwhile wait for its answer
	list      []check
	checkedAt time.Time
	failing   []string
}

// Check registers a dependency /readyz asks about each time (at most once per half second):
// while probe fails, /readyz answers 503 naming it among what it waits for, and 200 again
// once it answers. probe gets a context with a two-second deadline; pgxpool.Pool's Ping and
// bus.Conn's Ready fit as they are. Register every check before serving /readyz.
func (id Identity) Check(name string, probe func(ctx context.Context) error) {
	if id.ready == nil {
		return
	}
	id.ready.checks.mu.Lock()
	id.ready.checks.list = append(id.ready.checks.list, check{name: name, probe: probe})
	id.ready.checks.mu.Unlock()
}

// Failing names the registered dependencies that do not answer now, sorted, in a slice of the
// caller's own; none when all do.
func (id Identity) Failing(ctx context.Context) []string {
	if id.ready == nil {
		return nil
	}
	c := &id.ready.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == 0 || time.Since(c.checkedAt) < checkFresh {
		return slices.Clone(c.failing)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
	defer cancel()
	down := make([]bool, len(c.list))
	var wg sync.WaitGroup
	for i, ch := range c.list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan error, 1)
			go func() { done <- ch.probe(ctx) }()
			select {
			case err := <-done:
				down[i] = err != nil
			case <-ctx.Done():
				// A probe that ignores its context must not hold /readyz past the deadline.
				down[i] = true
			}
		}()
	}
	wg.Wait()
	var failing []string
	for i, ch := range c.list {
		if down[i] {
			failing = append(failing, ch.name)
		}
	}
	sort.Strings(failing)
	c.failing, c.checkedAt = failing, time.Now()
	return slices.Clone(failing)
}
