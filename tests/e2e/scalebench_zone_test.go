package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/profiling"
	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

const (
	// edgeStaticRequests over edgeClients concurrent clients measure a static site; each
	// goes to a site picked at random among edgeStaticSites, themselves picked at random
	// among every live static app.
	edgeStaticRequests = 3000
	edgeClients        = 8
	edgeStaticSites    = 1000
	// servingWorkers ask the static sites, all of them, after a restart.
	servingWorkers = 16
)

// measureEdge measures the edge: a static site, and a napping service's wake (issue 41).
//
// Static: the sites are first visited once each (a 200 naming its app), so the figure is
// the edge's work per request (routing, the site's manifest and bytes) on an open TLS
// connection, not the handshake of a host seen for the first time (the restart figure has
// those). Wake: each sampled service, napping, is asked once on a new connection; the time
// is from the request to the whole first answer, the handshake included, as a visitor sees.
func measureEdge(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Helper()
	statics := zoneStaticApps(w)
	if len(statics) == 0 {
		b.Fatal("measureEdge: no static app is live in the zone")
	}
	rand.Shuffle(len(statics), func(i, j int) { statics[i], statics[j] = statics[j], statics[i] })
	sites := statics[:min(edgeStaticSites, len(statics))]
	client := s.EdgeClient()
	eachParallel(servingWorkers, len(sites), func(i int) {
		if err := getStatic(client, s, sites[i]); err != nil {
			b.Fatalf("measureEdge: %v", err)
		}
	})
	samples := make([]time.Duration, edgeStaticRequests)
	var failed atomic.Int64
	eachParallel(edgeClients, edgeStaticRequests, func(i int) {
		a := sites[rand.IntN(len(sites))]
		began := time.Now()
		if err := getStatic(client, s, a); err != nil {
			failed.Add(1)
			return
		}
		samples[i] = time.Since(began)
	})
	if n := failed.Load(); n > 0 {
		b.Fatalf("measureEdge: %d of %d static requests failed", n, edgeStaticRequests)
	}

	sample := wakeSample(w)
	uids := sampleUIDs(b, w, sample)
	waitNapping(b, s, uids)
	wakes := make([]time.Duration, len(sample))
	// One at a time: the latency of a wake, not of a queue of them.
	watch := startWakeProfile(b, s, w) // scalebench_wakeprofile_test.go
	for i, a := range sample {
		wakes[i] = wakeOnce(b, s, a)
	}
	watch.finish(b, wakes)
	return []scaleFigure{latencyFigure("edge static", samples), latencyFigure("edge wake", wakes)}
}

// measureRestart stops the zone agent (gracefully: its services stop with it) and starts
// it again, and measures from the start until it serves again: every live static site has
// answered 200 (each on a new TLS connection, so with its handshake) and each sampled
// service, napping, has answered its first request. Both are asked from the moment the
// agent answers its health check; the sample's requests all leave at once, beside the
// sites', as their visitors' would.
func measureRestart(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Helper()
	statics, sample := zoneStaticApps(w), wakeSample(w)
	s.Stop("zoneagent")
	profiled := edgeProfileDuringRestart(b, s, w)
	recorded := hostProfileDuringRestart(b, w)
	defer recorded()
	began := time.Now()
	s.Restart("zoneagent")
	ready := time.Since(began)
	defer profiled()
	var retried atomic.Int64
	var staticsDone, wakesDone time.Duration
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		client := oneShotEdgeClient(s)
		eachParallel(servingWorkers, len(statics), func(i int) {
			retryUntil(b, 2*time.Minute, &retried, func() error { return getStatic(client, s, statics[i]) })
		})
		staticsDone = time.Since(began)
	}()
	go func() {
		defer wg.Done()
		eachParallel(len(sample), len(sample), func(i int) { wakeOnce(b, s, sample[i]) })
		wakesDone = time.Since(began)
	}()
	wg.Wait()
	serving := time.Since(began)
	b.Logf("zone restart: ready (health) after %s, %d static sites after %s, %d wakes after %s; %d requests retried",
		ready.Round(time.Millisecond), len(statics), staticsDone.Round(time.Millisecond), len(sample), wakesDone.Round(time.Millisecond), retried.Load())
	return []scaleFigure{{What: "zone restart to serving", Value: serving.Seconds(), Unit: "s"}}
}

// measureMemory measures what the zone's processes hold and what a napping app costs.
// The agent is restarted so that no sampled service has run since; every static site is
// visited once (the zone holds what serving each costs), then the memory is read (before);
// each sampled service is woken once and left to nap, and it is read again (after).
//
//   - "zone memory per app": the zone's own processes (the agent and its descendants not
//     running as an app: the edge, the database host, its pooler) before, less what they
//     held with no seeded app (seedZone's first restart), divided by the live apps: what a
//     live app that has not woken since the restart costs the zone, its site served once.
//   - "napping app memory": (after − before) over the sample, the zone's processes and every
//     process running as a sampled app's uid (what it keeps across naps) together.
//   - "zone memory per napping app" is the zone's own part of it (target 256 KB), and
//     "processes per napping app" counts what each napping app keeps running.
func measureMemory(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Helper()
	statics, sample := zoneStaticApps(w), wakeSample(w)
	uids := sampleUIDs(b, w, sample)
	s.Stop("zoneagent")
	s.Restart("zoneagent")
	client := oneShotEdgeClient(s)
	var retried atomic.Int64
	eachParallel(servingWorkers, len(statics), func(i int) {
		retryUntil(b, 2*time.Minute, &retried, func() error { return getStatic(client, s, statics[i]) })
	})
	settle()
	releaseZoneGarbage(b, s)
	before := measureZoneMemory(s.Pid(b, "zoneagent"), uids)
	eachParallel(len(sample), len(sample), func(i int) { wakeOnce(b, s, sample[i]) })
	waitNapping(b, s, uids)
	settle()
	raw := measureZoneMemory(s.Pid(b, "zoneagent"), uids)
	heap := releaseZoneGarbage(b, s)
	after := measureZoneMemory(s.Pid(b, "zoneagent"), uids)
	b.Logf("zone memory after the wakes, before the runtimes' release: %d KB %v; the runtimes' heaps after it: %s",
		raw.zoneKB, raw.zoneKBByName, heap)
	n := float64(len(sample))
	kept := 0
	for _, names := range after.appProcs {
		kept += len(names)
	}
	live := len(zoneStaticApps(w)) + countServices(w)
	empty := w.extra["zone"].(*zoneSeedState).emptyZoneKB
	b.Logf("zone memory: empty %d KB; before %d KB in %d processes %v (apps' %d KB), after %d KB in %d %v (apps' %d KB, %d processes over %d napping apps: %v, KB %v)",
		empty, before.zoneKB, before.zoneProcs, before.zoneKBByName, before.appsKB, after.zoneKB, after.zoneProcs, after.zoneKBByName, after.appsKB, kept, len(sample), sampleNames(after), after.appKBByName)
	return []scaleFigure{
		{What: "zone memory per app", Value: float64(before.zoneKB-empty) / float64(live), Unit: "KB"},
		{What: "napping app memory", Value: float64(after.zoneKB+after.appsKB-before.zoneKB-before.appsKB) / n, Unit: "KB"},
		{What: "zone memory per napping app", Value: float64(after.zoneKB-before.zoneKB) / n, Unit: "KB"},
		{What: "zone memory per napping app, garbage of the wakes included", Value: float64(raw.zoneKB-before.zoneKB) / n, Unit: "KB"},
		{What: "processes per napping app", Value: float64(kept) / n, Unit: "processes"},
	}
}

// edgeProfileDuringRestart, with SCALE_BENCH_PROFILE_DIR set, gives the zone agent a
// profile server (only its edge process serves one) and takes a CPU profile of the edge for
// the first 30 s after the restart, written to <dir>/zone-restart-<apps>.cpu.pprof; it
// returns what waits for it. Without the variable it does nothing.
func edgeProfileDuringRestart(b *testing.B, s *harness.Stack, w *scaleWorld) func() {
	b.Helper()
	dir := os.Getenv("SCALE_BENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	if s.Env["PROFILE_ADDR"] == "" {
		// Set after the stack started, so only the agent restarted from now on reads it.
		s.Env["PROFILE_ADDR"] = testinfra.FreeAddr(b)
	}
	file := filepath.Join(dir, fmt.Sprintf("zone-restart-%d.cpu.pprof", len(w.apps)))
	errc := make(chan error, 1)
	go func() {
		// The edge's profile server is up once the agent has started it.
		deadline := time.Now().Add(time.Minute)
		for {
			err := profiling.SaveCPU(s.Env["PROFILE_ADDR"], 30, file)
			if err == nil || time.Now().After(deadline) {
				errc <- err
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() {
		if err := <-errc; err != nil {
			b.Errorf("profile of the zone's edge (%s): %v", file, err)
			return
		}
		b.Logf("profile of the zone's edge after the restart: %s", file)
	}
}

// hostProfileDuringRestart records every CPU of the host (`perf record -a -g`) over the
// minute after the restart when SCALE_BENCH_PERF names perf and SCALE_BENCH_PROFILE_DIR a
// folder: the edge's own profile shows one process, while a restart's time goes to the
// edge, the wakes' runtimes, pasta and the bench's own handshakes together.
func hostProfileDuringRestart(b *testing.B, w *scaleWorld) func() {
	b.Helper()
	perf, dir := os.Getenv("SCALE_BENCH_PERF"), os.Getenv("SCALE_BENCH_PROFILE_DIR")
	if perf == "" || dir == "" {
		return func() {}
	}
	w.hostProfiles++
	file := filepath.Join(dir, fmt.Sprintf("zone-restart-%d-%d.perf.data", len(w.apps), w.hostProfiles))
	cmd := exec.Command(perf, "record", "-a", "-g", "-F", "199", "-o", file, "--", "sleep", "60")
	if err := cmd.Start(); err != nil {
		b.Errorf("perf over the restart: %v", err)
		return func() {}
	}
	return func() {
		if err := cmd.Wait(); err != nil {
			b.Errorf("perf over the restart: %v", err)
			return
		}
		b.Logf("the host's profile over the restart: %s", file)
	}
}

// releaseZoneGarbage asks the agent's and its edge's Go runtimes to collect and return to
// the OS what they no longer hold (pkg/profiling's free-os-memory, on their loopback profile
// servers), so a reading counts what the zone keeps: right after a hundred wakes at once the
// heaps still hold those wakes' garbage, which the background scavenger returns only over
// minutes, and which is the burst's, not the napping apps'. It returns what each answered.
func releaseZoneGarbage(b *testing.B, s *harness.Stack) string {
	b.Helper()
	var out []string
	for _, v := range []string{"ZONE_AGENT_PROFILE_ADDR", "PROFILE_ADDR"} {
		resp, err := http.Post("http://"+s.Env[v]+"/debug/free-os-memory", "", nil)
		if err != nil {
			b.Fatalf("release the zone's garbage (%s): %v", v, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("release the zone's garbage (%s): %d %s", v, resp.StatusCode, body)
		}
		out = append(out, v+" "+strings.TrimSpace(string(body)))
	}
	time.Sleep(time.Second)
	return strings.Join(out, "; ")
}

// settle lets the Go runtimes of the zone return what a burst of requests left them (the
// scavenger) before memory is read: a reading taken mid-burst measures garbage.
func settle() { time.Sleep(5 * time.Second) }

// zoneStaticApps are the static apps seeded live in the zone (their sites name them).
func zoneStaticApps(w *scaleWorld) []scaleApp {
	var out []scaleApp
	for _, a := range w.apps {
		if a.ZoneSeeded && a.Kind == "static" {
			out = append(out, a)
		}
	}
	return out
}

func countServices(w *scaleWorld) int {
	n := 0
	for _, a := range w.apps {
		if a.Kind == "service" && (a.ZoneSeeded || a.Measured) {
			n++
		}
	}
	return n
}

func wakeSample(w *scaleWorld) []scaleApp {
	var out []scaleApp
	for _, a := range w.apps {
		if a.WakeSample {
			out = append(out, a)
		}
	}
	return out
}

// sampleUIDs are the sampled services' uids, which the seed allocated.
func sampleUIDs(b *testing.B, w *scaleWorld, sample []scaleApp) map[uint32]bool {
	b.Helper()
	st, _ := w.extra["zone"].(*zoneSeedState)
	out := map[uint32]bool{}
	for _, a := range sample {
		uid, ok := st.uids[a.ID]
		if st == nil || !ok {
			b.Fatalf("no uid seeded for %s", a.Slug)
		}
		out[uid] = true
	}
	return out
}

func sampleNames(m zoneMemory) map[string]int {
	out := map[string]int{}
	for _, names := range m.appProcs {
		for _, n := range names {
			out[n]++
		}
	}
	return out
}

// waitNapping waits until none of the sampled services runs an instance (ZONE_IDLE_AFTER
// passed and the nap job stopped each).
func waitNapping(b *testing.B, s *harness.Stack, uids map[uint32]bool) {
	b.Helper()
	idle, _ := time.ParseDuration(s.Env["ZONE_IDLE_AFTER"])
	deadline := time.Now().Add(2*idle + time.Minute)
	for {
		m := measureZoneMemory(s.Pid(b, "zoneagent"), uids)
		awake := 0
		for uid := range uids {
			if m.awake(uid) {
				awake++
			}
		}
		if awake == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d sampled services still run after %s idle: %v", awake, len(uids), 2*idle+time.Minute, sampleNames(m))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// wakeOnce asks a napping service for / and returns how long until it answered 200. A first
// request answered otherwise (the zone failed that wake) is logged with what the agent said
// about the app, and asked again until it answers: the time counts from the first.
func wakeOnce(b *testing.B, s *harness.Stack, a scaleApp) time.Duration {
	began := time.Now()
	err := getService(s.EdgeClient(), s, a)
	if err == nil {
		return time.Since(began)
	}
	var said []string
	for _, l := range strings.Split(s.Logs()["zoneagent"], "\n") {
		if strings.Contains(l, a.ID) || strings.Contains(l, a.Slug) {
			said = append(said, l)
		}
	}
	b.Logf("wake of %s failed its first request: %v; the agent on it:\n%s", a.Slug, err, strings.Join(said[max(0, len(said)-10):], "\n"))
	var retried atomic.Int64
	retryUntil(b, 2*time.Minute, &retried, func() error { return getService(s.EdgeClient(), s, a) })
	return time.Since(began)
}

// getStatic asks a seeded site for / and wants the page that names its app.
func getStatic(client *http.Client, s *harness.Stack, a scaleApp) error {
	status, body, err := edgeFetch(client, s, a.Slug)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(body, "seeded site "+a.Slug+"\n") {
		return fmt.Errorf("%s: %d %.80q", a.Slug, status, body)
	}
	return nil
}

// getService asks a seeded service for / (the template's server answers 200).
func getService(client *http.Client, s *harness.Stack, a scaleApp) error {
	status, body, err := edgeFetch(client, s, a.Slug)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: %d %.120q", a.Slug, status, body)
	}
	return nil
}

func edgeFetch(client *http.Client, s *harness.Stack, slug string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.EdgeURL(slug+".apps.localhost", "/"), nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", slug, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// oneShotEdgeClient is s.EdgeClient with a new connection (and TLS handshake) per request,
// as each site's first visitor after a restart has; it holds no idle connection per site,
// which past EDGE_MAX_CONNS_PER_IP the edge would refuse.
func oneShotEdgeClient(s *harness.Stack) *http.Client {
	c := s.EdgeClient()
	c.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}

// eachParallel runs fn(0..n-1) on workers goroutines.
func eachParallel(workers, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// retryUntil calls try until it succeeds, counting the retries; past timeout the bench
// fails with the last error.
func retryUntil(b *testing.B, timeout time.Duration, retried *atomic.Int64, try func() error) {
	deadline := time.Now().Add(timeout)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Errorf("still failing after %s: %v", timeout, err)
			return
		}
		retried.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
}
