//go:build chaos

package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/tests/e2e/harness"
)

// services are killed in this order; the zone agent and gateway included.
var services = []string{"identity", "billing", "apps", "deploys", "logs", "zoneagent", "gateway"}

// loadApp is what the load did to one app and was told had succeeded.
type loadApp struct {
	id, slug string
	region   string              // eu, or us on a two-zone stack
	env      map[string]string   // key → value answered 201/200
	deploys  map[string]string   // deploy id → index.html content, answered 201
	logLines map[string]struct{} // messages published (confirmed by the broker)
}

type load struct {
	s        *harness.Stack
	token    string
	http     *http.Client
	regions  []string                // eu, and us on a two-zone stack (ZONES=2)
	edgeHTTP map[string]*http.Client // region → HTTPS to its zone's edge, trusting its local root
	zones    map[string]publisher    // region → its zone on the broker, which alone may ship its apps' log batches
	next     atomic.Int64            // the request count, which picks the gateway (REPLICAS=2: both in turn)

	mu   sync.Mutex
	apps []*loadApp

	ops, failed atomic.Int64
}

func (l *load) call(method, path string, body []byte, contentType string) (int, []byte, error) {
	gateway := l.s.Gateways[int(l.next.Add(1))%len(l.s.Gateways)]
	req, err := http.NewRequest(method, gateway+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := l.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

func (l *load) count(ok bool) {
	l.ops.Add(1)
	if !ok {
		l.failed.Add(1)
	}
}

// step does one round of work: a new app now and then (the plan allows 50), else env, a
// deploy or a log batch on an app it has.
func (l *load) step(t *testing.T, n int) {
	l.mu.Lock()
	have := len(l.apps)
	l.mu.Unlock()
	if have < 40 && (have == 0 || n%5 == 0) {
		region := l.regions[have%len(l.regions)]
		status, body, err := l.call(http.MethodPost, "/api/apps", []byte(`{"kind":"static","region":"`+region+`"}`), "application/json")
		l.count(err == nil && status == http.StatusCreated)
		if err == nil && status == http.StatusCreated {
			var m map[string]any
			json.Unmarshal(body, &m)
			l.mu.Lock()
			l.apps = append(l.apps, &loadApp{id: m["id"].(string), slug: m["slug"].(string), region: region, env: map[string]string{}, deploys: map[string]string{}, logLines: map[string]struct{}{}})
			l.mu.Unlock()
		}
		return
	}
	l.mu.Lock()
	a := l.apps[n%len(l.apps)]
	l.mu.Unlock()
	switch n % 3 {
	case 0:
		key, value := fmt.Sprintf("K%d", n%7), uuid.NewString()
		body, _ := json.Marshal(map[string]string{"key": key, "value": value})
		status, _, err := l.call(http.MethodPut, "/api/apps/"+a.slug+"/env", body, "application/json")
		ok := err == nil && (status == http.StatusOK || status == http.StatusCreated)
		l.count(ok || status == http.StatusTooManyRequests)
		if ok {
			l.mu.Lock()
			a.env[key] = value
			l.mu.Unlock()
		}
	case 1:
		content := "site " + uuid.NewString()
		const boundary = "chaos-boundary"
		body := fmt.Appendf(nil, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=\"index.html\"\r\n\r\n%s\r\n--%s--\r\n", boundary, content, boundary)
		status, resp, err := l.call(http.MethodPost, "/api/apps/"+a.slug+"/deploys", body, "multipart/form-data; boundary="+boundary)
		ok := err == nil && status == http.StatusCreated
		// A deploy limit answer is the plan working, not a fault.
		l.count(ok || status == http.StatusTooManyRequests)
		if ok {
			var m map[string]any
			json.Unmarshal(resp, &m)
			l.mu.Lock()
			a.deploys[m["id"].(string)] = content
			l.mu.Unlock()
		}
	case 2:
		var entries []*logsv1.LogEntry
		var msgs []string
		for range 5 {
			m := "line " + uuid.NewString()
			msgs = append(msgs, m)
			entries = append(entries, &logsv1.LogEntry{AppId: a.id, Stream: "stdout", Timestamp: timestamppb.Now(), Message: m})
		}
		// A zone's batch, confirmed by the broker; while the broker is down it is not sent
		// (and not counted as sent), as a zone's outbox would hold it.
		err := l.zones[a.region].publish(l.s, "zone.logs.batch", &logsv1.LogBatch{Entries: entries})
		l.count(err == nil)
		if err == nil {
			l.mu.Lock()
			for _, m := range msgs {
				a.logLines[m] = struct{}{}
			}
			l.mu.Unlock()
		}
	}
}

// The stack's shape comes from the environment, as make chaos passes it: ZONES=2 runs a
// second zone (half the apps in region us), REPLICAS=2 a second process of every service and
// a second gateway (the load uses both; each process, first and second, is killed in turn).
func stackShape(t *testing.T) (opts harness.Options, regions, victims []string) {
	regions, victims = []string{"eu"}, append([]string{}, services...)
	switch os.Getenv("ZONES") {
	case "", "1":
	case "2":
		opts.TwoZones = true
		regions = append(regions, "us")
		victims = append(victims, "zoneagent-"+harness.SecondZone)
	default:
		t.Fatalf("ZONES=%q: 1 or 2", os.Getenv("ZONES"))
	}
	switch os.Getenv("REPLICAS") {
	case "", "1":
	case "2":
		opts.Replicas = 2
		for _, name := range services {
			if name != "zoneagent" {
				victims = append(victims, harness.ReplicaName(name))
			}
		}
	default:
		t.Fatalf("REPLICAS=%q: 1 or 2", os.Getenv("REPLICAS"))
	}
	return opts, regions, victims
}

func TestChaos(t *testing.T) {
	start := time.Now()
	opts, regions, victims := stackShape(t)
	opts.Env = map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "BUS_QUEUE_EXPIRES": "30m"}
	drain := newDrainProbe(t, opts.Env)
	s := harness.Start(t, opts)
	acct := s.NewAccount(t, "chaos")
	if out, err := s.Command("billing", "set-plan", "-account", acct.Email, "-plan", "flock"); err != nil {
		t.Fatalf("set-plan: %v %s", err, out)
	}
	l := &load{s: s, token: acct.Token, http: &http.Client{Timeout: 20 * time.Second}, regions: regions,
		edgeHTTP: map[string]*http.Client{}, zones: map[string]publisher{}}
	for _, region := range regions {
		l.edgeHTTP[region] = s.Zone(region).EdgeClient()
		l.zones[region] = zonePublisher(t, s.Zone(region))
	}
	t.Logf("stack: zones %d (regions %v), gateways %d; faults: SIGKILL %v, then the broker and Postgres", len(regions), regions, len(s.Gateways), victims)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; ; n += 3 {
				select {
				case <-stop:
					return
				default:
				}
				l.step(t, n)
				// Under each write operation's 120 a minute for the one account.
				time.Sleep(500 * time.Millisecond)
			}
		}()
	}

	var faults []string
	settle := func() { time.Sleep(4 * time.Second) }
	settle()
	var probeApp, probeSlug string
	harness.Eventually(t, 30*time.Second, "the load's first app", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.apps) > 0 {
			probeApp, probeSlug = l.apps[0].id, l.apps[0].slug
		}
		return probeApp != ""
	})
	probe := startCronProbe(t, s, probeApp)
	// A drain on the same app receives through every fault (the logs replicas' kills
	// included).
	drain.attach(t, l, probeApp, probeSlug)
	for _, name := range victims {
		s.Kill(name)
		s.Restart(name)
		faults = append(faults, "SIGKILL "+name)
		t.Logf("fault: SIGKILL %s, restarted", name)
		settle()
	}
	if out, err := exec.Command("rabbitmqctl", "stop_app").CombinedOutput(); err != nil {
		t.Fatalf("rabbitmqctl stop_app: %v %s", err, out)
	}
	time.Sleep(3 * time.Second)
	if out, err := exec.Command("rabbitmqctl", "start_app").CombinedOutput(); err != nil {
		t.Fatalf("rabbitmqctl start_app: %v %s", err, out)
	}
	faults = append(faults, "broker restart")
	t.Log("fault: broker stop_app/start_app")
	settle()
	settle()
	if out, err := exec.Command("pg_ctlcluster", pgVersion(t), "main", "restart").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctlcluster restart: %v %s", err, out)
	}
	faults = append(faults, "postgres restart")
	t.Log("fault: postgres restart")
	settle()
	settle()
	close(stop)
	wg.Wait()
	loadEnd := time.Now()

	converged, report := l.converge(t, time.Minute)
	took := time.Since(loadEnd)
	fmt.Printf("\nchaos: %d operations (%d failed during faults) in %s; faults injected: %d (%v)\n",
		l.ops.Load(), l.failed.Load(), loadEnd.Sub(start).Round(time.Second), len(faults), faults)
	fmt.Printf("chaos: %s\n", report.String())
	if !converged {
		t.Fatalf("did not converge within a minute: %s", report)
	}
	fmt.Printf("chaos: converged in %s; losses = %d, double effects = %d\n", took.Round(100*time.Millisecond), report.losses(), report.doubles())
	if report.losses() != 0 || report.doubles() != 0 {
		t.Fatalf("losses %d, double effects %d", report.losses(), report.doubles())
	}
	// The drain delivered every line of its app, once or (a batch in flight at a kill) again.
	lines, missing, repeats := drain.check(t, l, probeApp, time.Minute)
	fmt.Printf("chaos: drain delivered %d of %d lines, %d repeats\n", lines-missing, lines, repeats)
	if missing != 0 || lines == 0 {
		t.Fatalf("drain: %d of %d lines missing", missing, lines)
	}
	// A fault repeats at most the batch in flight. At a busy app's volume that stays under a
	// tenth of the lines; the probe app writes a few lines a fault, so there the bound is one
	// repeat per fault (a first run: 6 repeats of 15 lines across 9 faults).
	if repeats > max(lines/10, len(faults)) {
		t.Fatalf("drain: %d repeats for %d lines across %d faults: more than a batch per fault", repeats, lines, len(faults))
	}
	// Every cron tick due while the deploys replicas were killed left exactly one run.
	ticks, err := probe.check(t)
	fmt.Printf("chaos: cron probe fired %d ticks, each once\n", ticks)
	if err != nil {
		t.Fatal(err)
	}
}

// pgVersion is the local cluster's version, as pg_ctlcluster names it.
func pgVersion(t *testing.T) string {
	out, err := exec.Command("sh", "-c", "pg_lsclusters -h | awk '$2==\"main\"{print $1; exit}'").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("pg_lsclusters: %v", err)
	}
	return string(bytes.TrimSpace(out))
}
