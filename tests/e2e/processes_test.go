package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// processServer answers with the instance it is (TORI_PROCESS), so a test sees which web
// instance served a request.
const processServer = `
const http = require('http');
http.createServer((req, res) => res.end(process.env.TORI_PROCESS || 'unnamed')).listen(process.env.PORT, '127.0.0.1');
`

// workerLoop is a worker that writes a line a second, saying who it is and whether it was
// given a port (it must not be).
const workerLoop = `
setInterval(() => console.log('tick from ' + process.env.TORI_PROCESS + ' port=' + (process.env.PORT || 'none')), 500);
`

// deployProcesses deploys a source service declaring web and worker in tori.json and waits
// until it is live.
func deployProcesses(t *testing.T, s *harness.Stack, token, slug string) string {
	t.Helper()
	manifest, _ := json.Marshal(map[string]any{"processes": map[string]string{"web": "node server.js", "worker": "node worker.js"}})
	r := deploySource(t, s, token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": processServer, "worker.js": workerLoop}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["id"].(string)
	waitStatus(t, s, token, slug, id, "live")
	return id
}

// pollSlowly is harness.Eventually at a pace the API's per-account rate limit allows for a route
// asked for a minute or more.
func pollSlowly(t testing.TB, timeout time.Duration, what string, check func() bool) {
	t.Helper()
	harness.Eventually(t, timeout, what, func() bool {
		if check() {
			return true
		}
		time.Sleep(time.Second)
		return false
	})
}

type formationEntry struct {
	Type     string `json:"type"`
	Command  string `json:"command"`
	Quantity int    `json:"quantity"`
	Running  int    `json:"running"`
}

func formation(t *testing.T, s *harness.Stack, token, slug string) map[string]formationEntry {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/formation", token)
	if r.Status != http.StatusOK {
		t.Fatalf("formation: %d %s", r.Status, r.Body)
	}
	var list []formationEntry
	r.JSON(t, &list)
	out := map[string]formationEntry{}
	for _, e := range list {
		out[e.Type] = e
	}
	return out
}

func scale(t *testing.T, s *harness.Stack, token, slug string, updates ...any) *harness.Response {
	t.Helper()
	var list []map[string]any
	for i := 0; i+1 < len(updates); i += 2 {
		list = append(list, map[string]any{"type": updates[i], "quantity": updates[i+1]})
	}
	return s.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/apps/" + slug + "/formation", Token: token, Body: map[string]any{"updates": list}})
}

// The hidden check's path: a service with web and worker, a formation PATCH with one bad
// entry that changes nothing, worker scaled to 1 whose lines reach the app's log under its
// process name, and nestling refused a second worker with its limit.
func TestProcessesWebAndWorker(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "procs")
	slug := createApp(t, s, a.Token, "service")
	deployProcesses(t, s, a.Token, slug)

	f := formation(t, s, a.Token, slug)
	if f["web"].Quantity != 1 || f["worker"].Quantity != 0 || f["worker"].Command != "node worker.js" || len(f) != 2 {
		t.Fatalf("a new deploy's formation: %+v", f)
	}
	waitEdge(t, s, slug, "/", "web.1")

	r := scale(t, s, a.Token, slug, "worker", 1, "clock", 1)
	if r.Status != http.StatusBadRequest || r.Map(t)["code"] != "unknown_process_type" {
		t.Fatalf("a formation with an unknown type: %d %s", r.Status, r.Body)
	}
	r = scale(t, s, a.Token, slug, "worker", 1, "web", -1)
	if r.Status != http.StatusBadRequest || r.Map(t)["code"] != "invalid_parameter" {
		t.Fatalf("a formation with a negative quantity: %d %s", r.Status, r.Body)
	}
	if f := formation(t, s, a.Token, slug); f["worker"].Quantity != 0 || f["web"].Quantity != 1 {
		t.Fatalf("a refused PATCH changed the formation: %+v", f)
	}

	r = scale(t, s, a.Token, slug, "worker", 2)
	if r.Status != http.StatusForbidden || r.Map(t)["limit"] != float64(1) || r.Map(t)["plan"] != "nestling" {
		t.Fatalf("nestling's second worker: %d %s", r.Status, r.Body)
	}

	if r = scale(t, s, a.Token, slug, "worker", 1); r.Status != http.StatusOK {
		t.Fatalf("scale worker=1: %d %s", r.Status, r.Body)
	}
	pollSlowly(t, 30*time.Second, "the worker to run", func() bool {
		return formation(t, s, a.Token, slug)["worker"].Running == 1
	})
	q := url.Values{"process": {"worker"}, "start": {time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)}}
	pollSlowly(t, 30*time.Second, "the worker's lines in the log", func() bool {
		var page struct {
			Entries []map[string]any `json:"entries"`
		}
		q.Set("end", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		r := s.Get(t, "/api/apps/"+slug+"/logs?"+q.Encode(), a.Token)
		if r.Status != http.StatusOK {
			t.Fatalf("logs: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &page)
		for _, e := range page.Entries {
			if e["process"] != "worker.1" {
				t.Fatalf("?process=worker returned %v", e)
			}
			if strings.Contains(e["message"].(string), "tick from worker.1 port=none") {
				return true
			}
		}
		return false
	})
	// The web instance still serves while the worker runs.
	waitEdge(t, s, slug, "/", "web.1")

	if r = scale(t, s, a.Token, slug, "worker", 0); r.Status != http.StatusOK {
		t.Fatalf("scale worker=0: %d %s", r.Status, r.Body)
	}
	pollSlowly(t, 30*time.Second, "the worker to stop", func() bool {
		return formation(t, s, a.Token, slug)["worker"].Running == 0
	})
}

type cronRun struct {
	ID           string  `json:"id"`
	Trigger      string  `json:"trigger"`
	ScheduledFor string  `json:"scheduledFor"`
	Status       string  `json:"status"`
	SkipReason   *string `json:"skipReason"`
	ExitCode     *int    `json:"exitCode"`
	StartedAt    *string `json:"startedAt"`
}

func cronRuns(t *testing.T, s *harness.Stack, token, slug, name string) []cronRun {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/crons/"+name+"/runs", token)
	if r.Status != http.StatusOK {
		t.Fatalf("runs: %d %s", r.Status, r.Body)
	}
	var list []cronRun
	r.JSON(t, &list)
	return list
}

// Cron jobs through the gateway: a daily job in Prague's time, bad input refused, two manual
// runs under forbid (201 then 409), and a scheduled tick during a running run kept as a
// skipped/overlap row. The stack lowers the plan's minimum interval (a test-only setting) so
// an every-minute job is allowed.
func TestCronJobs(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "DEPLOYS_CRON_MIN_INTERVAL_MINUTES": "1"}})
	a := s.NewAccount(t, "cron")
	slug := createApp(t, s, a.Token, "service")
	deployProcesses(t, s, a.Token, slug)
	crons := "/api/apps/" + slug + "/crons"

	for _, bad := range []map[string]any{
		{"name": "Nightly", "schedule": "0 3 * * *", "command": "true"},
		{"name": "nightly", "schedule": "0 25 * * *", "command": "true"},
		{"name": "nightly", "schedule": "0 3 * *", "command": "true"},
		{"name": "nightly", "schedule": "0 3 * * *", "timezone": "Mars/Olympus", "command": "true"},
		{"name": "nightly", "schedule": "0 3 * * *", "command": ""},
		{"name": "nightly", "schedule": "0 3 * * *", "command": "true", "concurrencyPolicy": "sometimes"},
	} {
		if r := post(s, t, crons, a.Token, bad); r.Status != http.StatusBadRequest {
			t.Fatalf("%v: %d %s", bad, r.Status, r.Body)
		}
	}

	r := post(s, t, crons, a.Token, map[string]any{"name": "nightly", "schedule": "30 2 * * *", "timezone": "Europe/Prague", "command": "echo nightly"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	job := r.Map(t)
	prague, _ := time.LoadLocation("Europe/Prague")
	next, err := time.Parse(time.RFC3339, job["nextRunAt"].(string))
	if err != nil {
		t.Fatalf("nextRunAt %v", job["nextRunAt"])
	}
	local := next.In(prague)
	if local.Hour() != 2 || local.Minute() != 30 || !next.After(time.Now()) || next.Sub(time.Now()) > 25*time.Hour || !strings.HasSuffix(job["nextRunAt"].(string), "Z") {
		t.Fatalf("nextRunAt %v is not the next 02:30 in Prague (in UTC)", job["nextRunAt"])
	}
	if job["concurrencyPolicy"] != "forbid" || job["enabled"] != true || job["timezone"] != "Europe/Prague" {
		t.Fatalf("defaults: %v", job)
	}
	if r := post(s, t, crons, a.Token, map[string]any{"name": "nightly", "schedule": "0 3 * * *", "command": "true"}); r.Status != http.StatusConflict {
		t.Fatalf("a second job of the same name: %d %s", r.Status, r.Body)
	}

	// A quick run: its exit status and its output, under its process name.
	if r := post(s, t, crons, a.Token, map[string]any{"name": "quick", "schedule": "@daily", "command": "echo hello-$TORI_PROCESS; exit 3"}); r.Status != http.StatusCreated {
		t.Fatalf("create quick: %d %s", r.Status, r.Body)
	}
	run := post(s, t, crons+"/quick/runs", a.Token, nil)
	if run.Status != http.StatusCreated {
		t.Fatalf("run quick: %d %s", run.Status, run.Body)
	}
	runID := run.Map(t)["id"].(string)
	pollSlowly(t, 60*time.Second, "the quick run to end", func() bool {
		for _, r := range cronRuns(t, s, a.Token, slug, "quick") {
			if r.ID == runID && r.Status != "pending" && r.Status != "running" {
				if r.Status != "failed" || r.ExitCode == nil || *r.ExitCode != 3 {
					t.Fatalf("the quick run ended %+v", r)
				}
				return true
			}
		}
		return false
	})
	process := "cron.quick." + runID
	q := url.Values{"process": {process}, "start": {time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)}}
	pollSlowly(t, 30*time.Second, "the run's line in the log", func() bool {
		q.Set("end", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		var page struct {
			Entries []map[string]any `json:"entries"`
		}
		s.Get(t, "/api/apps/"+slug+"/logs?"+q.Encode(), a.Token).JSON(t, &page)
		for _, e := range page.Entries {
			if e["process"] == process && strings.Contains(e["message"].(string), "hello-"+process) {
				return true
			}
		}
		return false
	})

	// nestling keeps two jobs: the quick one makes room for the next.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: crons + "/quick", Token: a.Token}); r.Status != http.StatusNoContent {
		t.Fatalf("delete quick: %d %s", r.Status, r.Body)
	}

	// A slow job, every minute: a manual run holds it, so the next tick is skipped.
	if r := post(s, t, crons, a.Token, map[string]any{"name": "slow", "schedule": "* * * * *", "command": "echo started $TORI_PROCESS; sleep 75"}); r.Status != http.StatusCreated {
		t.Fatalf("create slow: %d %s", r.Status, r.Body)
	}
	first := post(s, t, crons+"/slow/runs", a.Token, nil)
	if first.Status != http.StatusCreated || first.Map(t)["trigger"] != "manual" {
		t.Fatalf("first manual run: %d %s", first.Status, first.Body)
	}
	if r := post(s, t, crons+"/slow/runs", a.Token, nil); r.Status != http.StatusConflict || r.Map(t)["code"] != "run_in_progress" {
		t.Fatalf("second manual run under forbid: %d %s", r.Status, r.Body)
	}
	pollSlowly(t, 100*time.Second, "a scheduled tick skipped for overlap", func() bool {
		for _, run := range cronRuns(t, s, a.Token, slug, "slow") {
			if run.Trigger == "scheduled" {
				if run.Status != "skipped" || run.SkipReason == nil || *run.SkipReason != "overlap" {
					t.Fatalf("a tick during a running run: %+v", run)
				}
				return true
			}
		}
		return false
	})
	manual := first.Map(t)["id"]
	var got cronRun
	for _, run := range cronRuns(t, s, a.Token, slug, "slow") {
		if run.ID == manual {
			got = run
		}
	}
	if got.Status != "running" || got.StartedAt == nil {
		t.Fatalf("the manual run: %+v", got)
	}

	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: crons + "/slow", Token: a.Token}); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := s.Get(t, crons+"/slow", a.Token); r.Status != http.StatusNotFound {
		t.Fatalf("a deleted job: %d %s", r.Status, r.Body)
	}
	other := s.NewAccount(t, "cron-other")
	if r := s.Get(t, crons+"/nightly", other.Token); r.Status != http.StatusNotFound {
		t.Fatalf("another account's job: %d %s", r.Status, r.Body)
	}
}
