package e2e

import (
	"sync"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// previewsDomain is the stack's PREVIEWS_DOMAIN: the default (preview.<APPS_DOMAIN>), set
// explicitly so the tests name the hosts they ask for.
const previewsDomain = "preview.apps.localhost"

// TestPreviewsDrainsAndMetrics is issue #40 end to end on one stack: previews, log drains and
// the customer's metrics. The three parts (and the previews' own parts) run at the same time,
// so the long waits (a preview's 60 s TTL, a drain receiver failing for 30 s) overlap each
// other instead of adding up; run one with -run 'TestPreviewsDrainsAndMetrics/Drains'. They
// run beside each other as goroutines rather than as t.Parallel sub-tests, which -parallel
// (GOMAXPROCS, 2 here) would queue one after another.
func TestPreviewsDrainsAndMetrics(t *testing.T) {
	rcv := startDrainReceiver(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000",
		"PREVIEWS_DOMAIN":      previewsDomain,
		// The edge reports a minute's counts every second and the zone samples cgroups every
		// two, so a read sees requests within seconds rather than a minute.
		"ZONE_METRICS_FLUSH_INTERVAL":  "1s",
		"ZONE_METRICS_SAMPLE_INTERVAL": "2s",
		// The drains' receiver: a loopback host a drain may reach only because it is named
		// here, with the CA that signed its certificate.
		"LOGS_DRAIN_TEST_HOST": rcv.host,
		"LOGS_DRAIN_TEST_CA":   rcv.caFile,
	}})
	concurrently(t, map[string]func(*testing.T){
		"Previews": func(t *testing.T) { testPreviews(t, s) },
		"Drains":   func(t *testing.T) { testDrains(t, s, rcv) },
		"Metrics":  func(t *testing.T) { testAppMetrics(t, s) },
	})
}

// concurrently runs each named part as a sub-test, all at once (t.Run may be called from
// several goroutines), and returns when every one has ended.
func concurrently(t *testing.T, parts map[string]func(*testing.T)) {
	t.Helper()
	var wg sync.WaitGroup
	for name, fn := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, fn)
		}()
	}
	wg.Wait()
}

// pollEvery is harness.Eventually at a pace of one check per interval: the API's per-account
// rate limit (600 reads a minute) allows a few checks a second for a minute or more.
func pollEvery(t testing.TB, timeout, interval time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}

// expectRefusal checks a refusal's status and that its body is the contract's error shape
// (error, code and message all set), for refusals whose code the design leaves open.
func expectRefusal(t testing.TB, what string, r *harness.Response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	m := r.Map(t)
	for _, k := range []string{"error", "code", "message"} {
		if v, _ := m[k].(string); v == "" {
			t.Fatalf("%s: the error body has no %s: %s", what, k, r.Body)
		}
	}
	return m
}
