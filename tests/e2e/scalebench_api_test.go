package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

const (
	apiWarmup      = 20  // requests of each route before its samples
	apiReadSamples = 300 // samples of each read route
	// Writes leave something behind (a deleted app's tombstone, a superseded deploy), so
	// fewer of them.
	apiWriteSamples = 100
	apiLogsPage     = 500 // GET .../logs?limit= (the contract's largest page)
	// apiOpenDeploys is how many of the measured deploys may be open at once, under flock's
	// 5 concurrent deploys.
	apiOpenDeploys = 3
	// apiDeployStuck is how long a measured deploy may stay open before the round fails:
	// a small static site goes live in about a second.
	apiDeployStuck = 2 * time.Minute
)

// measureAPI measures the API's routes at the world's current size (issue 41), through the
// gateway, one request at a time, each after a warm-up. Every request is paced within its
// account's window of the contract's rate limits (untimed), so none is refused.
func measureAPI(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Helper()
	ctx := context.Background()
	st := cp(w)
	heavy := w.accounts[w.heavy]
	var heavySlugs []string
	for _, a := range w.apps {
		if a.Account == w.heavy {
			heavySlugs = append(heavySlugs, a.Slug)
		}
	}
	get := func(token, op, path string) func(int) error {
		return func(int) error {
			_, err := st.api.call(ctx, http.MethodGet, path, token, nil, "", http.StatusOK)
			return err
		}
	}
	pace := func(token, op string, limit int) func(int) error {
		return func(int) error { st.api.pace.wait(token, op, limit); return nil }
	}
	var figs []scaleFigure

	// Controls, not targets: work that does not depend on the number of apps, measured in the
	// same rounds as the routes, so a slower machine (steal, a busier neighbour) is told apart
	// from a cost that grows with the house. The gateway alone; identity's account (2,000
	// accounts at every size, behind the same sign-in check as every route); fixed CPU work in
	// the bench's own process.
	figs = append(figs, sampleRoute(b, "control GET /healthz (the gateway alone)", apiReadSamples, nil, get("", "", "/healthz"), nil))
	figs = append(figs, sampleRoute(b, "control GET /api/account (as many accounts at each size)", apiReadSamples,
		pace(heavy.Token, "GET /api/account", paceReads), get(heavy.Token, "", "/api/account"), nil))
	figs = append(figs, sampleRoute(b, "control fixed CPU work in the bench (SHA-256 of 1 MiB)", apiReadSamples, nil,
		func(int) error { fixedWork(); return nil }, nil))
	figs = append(figs, loopbackControl(b))

	raw, err := st.api.call(ctx, http.MethodGet, "/api/apps", heavy.Token, nil, "", http.StatusOK)
	var list []json.RawMessage
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list) != w.cfg.heavyAccountApps {
		b.Fatalf("GET /api/apps: want the heavy account's %d apps, got %d (%v)", w.cfg.heavyAccountApps, len(list), err)
	}
	figs = append(figs, sampleRoute(b, fmt.Sprintf("api GET /api/apps (%d apps)", w.cfg.heavyAccountApps), apiReadSamples,
		pace(heavy.Token, "GET /api/apps", paceReads), get(heavy.Token, "", "/api/apps"), nil))

	figs = append(figs, sampleRoute(b, "api GET /api/apps/{slug}", apiReadSamples,
		pace(heavy.Token, "GET /api/apps/{slug}", paceReads), func(i int) error {
			return get(heavy.Token, "", "/api/apps/"+heavySlugs[i%len(heavySlugs)])(i)
		}, nil))

	// The created apps are deleted after the samples (untimed), so the world keeps its size.
	// Not each right after its creation: a deletion's work in six services and the zone
	// (events, stops, the site's objects listed and removed) would overlap the next sample,
	// which then measures the deletion's fan-out rather than the route. The world grows by
	// the samples meanwhile (1.2 % at 10k, 12 % at 1k). The acting accounts take turns.
	type createdApp struct{ token, slug string }
	var created []createdApp
	var actor scaleAccount
	figs = append(figs, sampleRoute(b, "api POST /api/apps", apiWriteSamples, func(i int) error {
		actor = w.accounts[1+i%cpActors]
		st.api.pace.wait(actor.Token, "POST /api/apps", paceWrites)
		return nil
	}, func(int) error {
		_, slug, err := st.api.createApp(ctx, actor.Token, "", "static")
		created = append(created, createdApp{actor.Token, slug})
		return err
	}, nil))
	for _, a := range created {
		st.api.pace.wait(a.token, "DELETE /api/apps/{slug}", paceWrites)
		if _, err := st.api.call(ctx, http.MethodDelete, "/api/apps/"+a.slug, a.token, nil, "", http.StatusOK); err != nil {
			b.Fatalf("DELETE /api/apps/%s: %v", a.slug, err)
		}
	}

	figs = append(figs, measureDeploys(b, ctx, w, st))

	logsApp := w.apps[st.logsApp]
	logsPath := logsPagePath(logsApp.Slug)
	raw, err = st.api.call(ctx, http.MethodGet, logsPath, heavy.Token, nil, "", http.StatusOK)
	var page struct{ Entries []json.RawMessage }
	if err != nil || json.Unmarshal(raw, &page) != nil || len(page.Entries) != apiLogsPage {
		b.Fatalf("GET %s: want a full page of %d entries, got %d (%v)", logsPath, apiLogsPage, len(page.Entries), err)
	}
	figs = append(figs, sampleRoute(b, fmt.Sprintf("api GET /api/apps/{slug}/logs (%d entries)", apiLogsPage), apiReadSamples,
		pace(heavy.Token, "GET /api/apps/{slug}/logs", paceReads), get(heavy.Token, "", logsPath), nil))
	return figs
}

// logsPagePath is a full page of the app's last 23 hours, oldest first (the logs app's
// busy day).
func logsPagePath(slug string) string {
	start := time.Now().UTC().Add(-23 * time.Hour).Format(time.RFC3339)
	return fmt.Sprintf("/api/apps/%s/logs?start=%s&limit=%d", slug, url.QueryEscape(start), apiLogsPage)
}

// measureDeploys times POST .../deploys of a small static site to the acting accounts'
// Measured apps in turn: the request's latency, not the time to live. Before each, the
// deploys still open beyond apiOpenDeploys are awaited (untimed, in the deploys service's
// table), so no plan's concurrent deploys refuse one.
func measureDeploys(b *testing.B, ctx context.Context, w *scaleWorld, st *cpState) scaleFigure {
	b.Helper()
	var measured []int
	for i, a := range w.apps {
		if a.Measured {
			measured = append(measured, i)
		}
	}
	var pending []string
	settle := func(keep int) error {
		since := time.Now()
		for len(pending) > keep {
			status, err := deployStatusInDB(ctx, st.db, pending[0])
			if err != nil {
				return err
			}
			if status == "building" || status == "releasing" {
				if time.Since(since) > apiDeployStuck {
					return fmt.Errorf("measured deploy %s still %s after %s (is the zone agent consuming its commands?)", pending[0], status, apiDeployStuck)
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if status != "live" && status != "superseded" {
				return fmt.Errorf("measured deploy %s ended %s", pending[0], status)
			}
			pending = pending[1:]
		}
		return nil
	}
	app := func(i int) scaleApp { return w.apps[measured[i%len(measured)]] }
	f := sampleRoute(b, "api POST /api/apps/{slug}/deploys (static, small)", apiWriteSamples, func(i int) error {
		st.api.pace.wait(w.accounts[app(i).Account].Token, "POST /api/apps/{slug}/deploys", paceWrites)
		return settle(apiOpenDeploys - 1)
	}, func(i int) error {
		a := app(i)
		id, err := st.api.deployStatic(ctx, w.accounts[a.Account].Token, a.Slug, fmt.Sprintf("measured %s %d", a.Slug, time.Now().UnixNano()))
		if err == nil {
			pending = append(pending, id)
		}
		return err
	}, nil)
	if err := settle(0); err != nil {
		b.Fatalf("measured deploys: %v", err)
	}
	// The measured apps' live deploys are the last ones made: their history as the zone's
	// seed should know it.
	for _, i := range measured {
		var live string
		err := st.db.QueryRow(ctx, `SELECT id::text FROM deploys.deploys WHERE app_id = $1 AND status = 'live'`, w.apps[i].ID).Scan(&live)
		if err != nil {
			b.Fatalf("measured app's live deploy: %v", err)
		}
		if w.apps[i].liveDeploy() != live {
			w.apps[i].DeployIDs = append(w.apps[i].DeployIDs, live)
		}
	}
	return f
}

// fixedWorkInput is what fixedWork hashes; fixedWorkSum keeps the result, so the work is done.
var (
	fixedWorkInput = make([]byte, 1<<20)
	fixedWorkSum   [sha256.Size]byte
)

// fixedWork is the same CPU work every time: its latency moves only with the machine.
func fixedWork() { fixedWorkSum = sha256.Sum256(fixedWorkInput) }

// loopbackControl times round trips of 64 bytes over a loopback TCP connection between two
// goroutines of the bench: the kernel's and the scheduler's share of every request (syscalls,
// wake-ups, context switches), with no process of Tori's in it. On a VM whose interrupts and
// page faults go through the hypervisor, that share moves with the machine, not the house.
func loopbackControl(b *testing.B) scaleFigure {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("loopback control: %v", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatalf("loopback control: %v", err)
	}
	defer c.Close()
	buf := make([]byte, 64)
	return sampleRoute(b, "control loopback round trip in the bench (no Tori process)", apiReadSamples, nil, func(int) error {
		if _, err := c.Write(buf); err != nil {
			return err
		}
		_, err := io.ReadFull(c, buf)
		return err
	}, nil)
}

// sampleRoute times n calls of do after apiWarmup untimed ones, before and after (when not
// nil) run untimed around each, and logs what the host did meanwhile (scalebench_hostwatch_test.go).
func sampleRoute(b *testing.B, what string, n int, before func(i int) error, do func(i int) error, after func() error) scaleFigure {
	b.Helper()
	host := watchHost()
	defer func() { b.Logf("%s: %s", what, host.summary()) }()
	samples := make([]time.Duration, 0, n)
	for i := range apiWarmup + n {
		if before != nil {
			if err := before(i); err != nil {
				b.Fatalf("%s: %v", what, err)
			}
		}
		start := time.Now()
		err := do(i)
		took := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v", what, err)
		}
		if after != nil {
			if err := after(); err != nil {
				b.Fatalf("%s: %v", what, err)
			}
		}
		if i >= apiWarmup {
			samples = append(samples, took)
		}
	}
	return latencyFigure(what, samples)
}

// logReaders reads the logs app's page from readers goroutines until stop is closed, each
// read's start and duration kept.
type logReaders struct {
	mu      sync.Mutex
	samples []timedSample
	err     error
	wg      sync.WaitGroup
	stop    chan struct{}
}

type timedSample struct {
	start time.Time
	took  time.Duration
}

func startLogReaders(ctx context.Context, api *scaleClient, token, path string, readers int) *logReaders {
	r := &logReaders{stop: make(chan struct{})}
	for range readers {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				select {
				case <-r.stop:
					return
				default:
				}
				api.pace.wait(token, "GET /api/apps/{slug}/logs", paceReads)
				start := time.Now()
				_, err := api.call(ctx, http.MethodGet, path, token, nil, "", http.StatusOK)
				took := time.Since(start)
				r.mu.Lock()
				r.samples = append(r.samples, timedSample{start, took})
				if err != nil && r.err == nil {
					r.err = err
				}
				r.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	return r
}

// since counts the reads that ended after t.
func (r *logReaders) since(t time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.samples {
		if s.start.Add(s.took).After(t) {
			n++
		}
	}
	return n
}

// finish stops the readers and returns the durations of the reads that ended after t.
func (r *logReaders) finish(t time.Time) ([]time.Duration, error) {
	close(r.stop)
	r.wg.Wait()
	var out []time.Duration
	for _, s := range r.samples {
		if s.start.Add(s.took).After(t) {
			out = append(out, s.took)
		}
	}
	return out, r.err
}
