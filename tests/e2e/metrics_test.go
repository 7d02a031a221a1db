package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// scrape reads http://addr/metrics and returns each sample name's total over its series.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape %s: %d %s", addr, resp.StatusCode, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i > 0 {
			name, rest = line[:i], line[i:]
		}
		if j := strings.LastIndex(rest, "} "); j >= 0 {
			rest = rest[j+1:]
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("scrape %s: %q", addr, line)
		}
		out[name] += v
	}
	return out
}

// metricsAddrs is where each process of s answers /metrics: its health address, and for the
// gateway its metrics address apart from the public port.
func metricsAddrs(s *harness.Stack) map[string]string {
	out := map[string]string{}
	for name, v := range healthAddrVars {
		out[name] = s.Env[v]
	}
	out["gateway"] = s.Env["GATEWAY_METRICS_ADDR"]
	return out
}

// Every process serves its families on its operator address (the gateway's never on its
// public port), and a source deploy, a nap and a wake and a managed database move the
// gateway's, the bus's, the sandbox's and the zone's.
func TestMetricsFamiliesExistAndMove(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "ZONE_IDLE_AFTER": "2s"}})
	addrs := metricsAddrs(s)

	common := []string{"go_goroutines", "process_resident_memory_bytes", "tori_http_requests_total", "tori_http_request_duration_seconds_count"}
	want := map[string][]string{
		"gateway":   {"tori_gateway_rate_limit_refusals_total"},
		"identity":  {"tori_bus_deliveries_total", "tori_bus_retries_total", "tori_bus_dead_letters_total", "tori_bus_outbox_depth", "tori_bus_outbox_oldest_age_seconds"},
		"billing":   {"tori_bus_deliveries_total", "tori_bus_outbox_depth"},
		"apps":      {"tori_bus_deliveries_total", "tori_bus_outbox_depth"},
		"deploys":   {"tori_bus_deliveries_total", "tori_bus_outbox_depth", "tori_bus_outbox_oldest_age_seconds"},
		"logs":      {"tori_bus_deliveries_total", "tori_bus_outbox_depth"},
		"databases": {"tori_bus_deliveries_total", "tori_bus_outbox_depth"},
		"zoneagent": {"tori_bus_deliveries_total", "tori_bus_outbox_depth", "tori_zone_sandbox_starts_total", "tori_zone_sandbox_processes",
			"tori_zone_wakes_total", "tori_zone_oom_kills_total", "tori_zone_disk_size_bytes", "tori_zone_disk_used_bytes", "tori_zone_cgroup_memory_bytes",
			"tori_zone_dump_objects_reclaimed_total"}, // the last from the database host, shown by the agent
	}
	before := map[string]map[string]float64{}
	for name, addr := range addrs {
		got := scrape(t, addr)
		for _, family := range append(append([]string{}, common...), want[name]...) {
			if _, ok := got[family]; !ok {
				t.Errorf("%s /metrics has no %s", name, family)
			}
		}
		before[name] = got
	}
	if t.Failed() {
		t.FailNow()
	}
	// The public port has no such route: a caller gets the error every unknown path gets.
	if r := s.Do(t, harness.Request{Method: http.MethodGet, Path: "/metrics"}); r.Status == http.StatusOK || strings.Contains(string(r.Body), "tori_http") {
		t.Fatalf("the gateway's public port answers /metrics: %d %.200s", r.Status, r.Body)
	}

	a := s.NewAccount(t, "metrics")
	slug := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"m"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "none unreleased m")
	status := func() any { return s.Get(t, "/api/apps/"+slug, a.Token).Map(t)["status"] }
	harness.Eventually(t, 20*time.Second, "the app to nap", func() bool { return status() == "napping" })
	waitEdge(t, s, slug, "/", "none unreleased m") // wakes it
	if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
		t.Fatalf("create database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 30*time.Second, "the database ready", func() bool {
		return s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["status"] == "ready"
	})

	after := map[string]map[string]float64{}
	for name, addr := range addrs {
		after[name] = scrape(t, addr)
	}
	moved := func(process, family string, atLeast float64) {
		t.Helper()
		if d := after[process][family] - before[process][family]; d < atLeast {
			t.Errorf("%s %s moved by %v, want at least %v", process, family, d, atLeast)
		}
	}
	moved("gateway", "tori_http_requests_total", 5)
	moved("gateway", "tori_http_request_duration_seconds_count", 5)
	moved("deploys", "tori_http_requests_total", 1)
	moved("deploys", "tori_bus_published_total", 1)
	moved("zoneagent", "tori_bus_deliveries_total", 1)
	moved("zoneagent", "tori_bus_published_total", 1)
	moved("zoneagent", "tori_zone_sandbox_starts_total", 2) // the deploy's start and the wake
	moved("zoneagent", "tori_zone_wakes_total", 1)
	moved("zoneagent", "tori_zone_database_operation_duration_seconds_count", 1)
	if after["zoneagent"]["tori_zone_sandbox_processes"] < 1 {
		t.Errorf("zoneagent tori_zone_sandbox_processes %v with the app awake", after["zoneagent"]["tori_zone_sandbox_processes"])
	}
	if after["zoneagent"]["tori_zone_disk_used_bytes"] <= 0 {
		t.Errorf("zoneagent tori_zone_disk_used_bytes %v", after["zoneagent"]["tori_zone_disk_used_bytes"])
	}
}
