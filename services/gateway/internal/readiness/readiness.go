// Package readiness answers the gateway's /readyz: ready once every service it must route to
// answers its own /readyz.
package readiness

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"
)

// probeTimeout bounds one service's answer; a service slower than this is not ready.
const probeTimeout = 2 * time.Second

// Report is one round of probes.
type Report struct {
	Ready   bool
	Waiting []string // services not ready yet, sorted
}

// Checker probes services' /readyz and keeps the result for a while, so that however often
// /readyz is asked, each service is asked at most once per TTL: the gateway's own probe
// cannot be turned into load on the services behind it.
type Checker struct {
	rt       http.RoundTripper
	services map[string]string // name -> scheme://host[:port]
	ttl      time.Duration
	now      func() time.Time

	mu   sync.Mutex // held for a whole round, so concurrent callers share one
	last Report
	at   time.Time
	done bool
}

// New checks services (name -> base URL) through rt, keeping each result for ttl.
func New(rt http.RoundTripper, services map[string]string, ttl time.Duration) *Checker {
	return &Checker{rt: rt, services: services, ttl: ttl, now: time.Now}
}

// Check returns the last report if it is fresher than the TTL, and probes every service
// otherwise.
func (c *Checker) Check(ctx context.Context) Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done && c.now().Sub(c.at) < c.ttl {
		return c.last
	}
	c.last = c.probeAll(ctx)
	c.at = c.now()
	c.done = true
	return c.last
}

func (c *Checker) probeAll(ctx context.Context) Report {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		waiting []string
	)
	for name, base := range c.services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !c.probe(ctx, base) {
				mu.Lock()
				waiting = append(waiting, name)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(waiting)
	return Report{Ready: len(waiting) == 0, Waiting: waiting}
}

func (c *Checker) probe(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
