package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/contract/billinghold"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/usecase"
)

// serviceWithLive adds a service app with a live image deploy.
func (e *env) serviceWithLive(slug string) (appID, deployID string) {
	e.t.Helper()
	appID = e.addApp(e.account, slug, "service")
	status, body, _ := e.postJSON(e.account, "/api/apps/"+slug+"/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
	if status != http.StatusCreated {
		e.t.Fatalf("image deploy: %d %v", status, body)
	}
	deployID = body["id"].(string)
	e.goLive(deployID)
	return appID, deployID
}

func (e *env) cronCall(method, path, body string) (int, map[string]any) {
	e.t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	status, out, _ := e.request(e.account, method, path, ct, strings.NewReader(body), int64(len(body)))
	return status, out
}

func (e *env) addCron(slug, body string) map[string]any {
	e.t.Helper()
	status, out := e.cronCall("POST", "/api/apps/"+slug+"/crons", body)
	if status != http.StatusCreated {
		e.t.Fatalf("create cron: %d %v", status, out)
	}
	return out
}

// cronRuns lists a job's runs through the API, newest first.
func (e *env) cronRuns(slug, name string) []map[string]any {
	e.t.Helper()
	status, out := e.cronCall("GET", "/api/apps/"+slug+"/crons/"+name+"/runs?limit=200", "")
	if status != http.StatusOK {
		e.t.Fatalf("runs: %d %v", status, out)
	}
	var rs []map[string]any
	for _, r := range out["list"].([]any) {
		rs = append(rs, r.(map[string]any))
	}
	return rs
}

func (e *env) fireDue() {
	e.t.Helper()
	if _, err := e.crons.FireDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// cronReport applies a zone's report on a run as the bus consumer would.
func (e *env) cronReport(runID string, status zonev1.CronRunStatus, exit int32) {
	e.t.Helper()
	err := store.New(e.pool).CronInTx(context.Background(), func(tx usecase.CronTx) error {
		return e.crons.OnCronProgress(context.Background(), tx, &zonev1.CronRunProgress{RunId: runID, AppId: e.appIDOfRun(runID), Zone: "local", Status: status, ExitCode: exit})
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) appIDOfRun(runID string) string {
	var id string
	if err := e.pool.QueryRow(context.Background(), `SELECT app_id FROM cron_runs WHERE id = $1`, runID).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// lastOutbox decodes the newest outbox message with key into msg.
func (e *env) lastOutbox(key string, msg proto.Message) {
	e.t.Helper()
	var payload []byte
	if err := e.pool.QueryRow(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq DESC LIMIT 1`, key).Scan(&payload); err != nil {
		e.t.Fatalf("outbox %s: %v", key, err)
	}
	if err := proto.Unmarshal(payload, msg); err != nil {
		e.t.Fatal(err)
	}
}

func TestCronJobLifecycle(t *testing.T) {
	e := newEnv(t, testPlan)
	e.serviceWithLive("svc")

	job := e.addCron("svc", `{"name":"nightly","schedule":"30 2 * * *","timezone":"Europe/Prague","command":"bin/report"}`)
	want := map[string]any{"name": "nightly", "schedule": "30 2 * * *", "timezone": "Europe/Prague", "command": "bin/report",
		"concurrencyPolicy": "forbid", "timeoutSeconds": float64(900), "enabled": true, "lastRun": nil,
		// The clock reads 2026-11-22T03:00Z: 02:30 CET the next day.
		"nextRunAt": "2026-11-23T01:30:00.000Z", "createdAt": "2026-11-22T03:00:00.000Z", "updatedAt": "2026-11-22T03:00:00.000Z"}
	for k, v := range want {
		if job[k] != v {
			t.Errorf("%s: %v, want %v", k, job[k], v)
		}
	}
	if status, out := e.cronCall("POST", "/api/apps/svc/crons", `{"name":"nightly","schedule":"@daily","command":"x"}`); status != http.StatusConflict || out["code"] != "cron_job_exists" {
		t.Fatalf("duplicate: %d %v", status, out)
	}
	e.addCron("svc", `{"name":"aaa","schedule":"@hourly","command":"x","concurrencyPolicy":"allow","timeoutSeconds":30,"enabled":false}`)
	status, out := e.cronCall("GET", "/api/apps/svc/crons", "")
	list := out["list"].([]any)
	if status != http.StatusOK || len(list) != 2 || list[0].(map[string]any)["name"] != "aaa" || list[0].(map[string]any)["nextRunAt"] != nil {
		t.Fatalf("list: %d %v", status, out)
	}

	e.clock.Advance(time.Hour)
	status, out = e.cronCall("PATCH", "/api/apps/svc/crons/nightly", `{"command":"bin/report --all","enabled":false}`)
	if status != http.StatusOK || out["command"] != "bin/report --all" || out["enabled"] != false || out["nextRunAt"] != nil || out["updatedAt"] != "2026-11-22T04:00:00.000Z" {
		t.Fatalf("patch: %d %v", status, out)
	}
	status, out = e.cronCall("PATCH", "/api/apps/svc/crons/nightly", `{"enabled":true,"schedule":"0 6 * * *","timezone":"America/New_York"}`)
	if status != http.StatusOK || out["nextRunAt"] != "2026-11-22T11:00:00.000Z" {
		t.Fatalf("patch schedule: %d %v", status, out)
	}
	if status, out := e.cronCall("PATCH", "/api/apps/svc/crons/nightly", `{"name":"other"}`); status != http.StatusBadRequest || out["field"] != "name" {
		t.Fatalf("rename: %d %v", status, out)
	}
	if status, out := e.cronCall("GET", "/api/apps/svc/crons/nightly", ""); status != http.StatusOK || out["schedule"] != "0 6 * * *" {
		t.Fatalf("get: %d %v", status, out)
	}

	// Another account sees nothing.
	if status, _, _ := e.request("someone-else", "GET", "/api/apps/svc/crons/nightly", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("foreign get: %d", status)
	}
	if status, _, _ := e.request("someone-else", "DELETE", "/api/apps/svc/crons/nightly", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("foreign delete: %d", status)
	}

	if status, _ := e.cronCall("DELETE", "/api/apps/svc/crons/nightly", ""); status != http.StatusNoContent {
		t.Fatalf("delete: %d", status)
	}
	if status, out := e.cronCall("GET", "/api/apps/svc/crons/nightly", ""); status != http.StatusNotFound || out["code"] != "not_found" {
		t.Fatalf("get deleted: %d %v", status, out)
	}
	if status, out := e.cronCall("POST", "/api/apps/svc/crons/nightly/runs", ""); status != http.StatusNotFound {
		t.Fatalf("run a deleted job: %d %v", status, out)
	}
}

func TestCronJobRefusals(t *testing.T) {
	e := newEnv(t, testPlan)
	e.serviceWithLive("svc")
	e.addApp(e.account, "site", "static")
	for _, c := range []struct {
		body, code, field string
		status            int
	}{
		{`{"name":"Bad_Name","schedule":"@daily","command":"x"}`, "invalid_parameter", "name", 400},
		{`{"name":"a","schedule":"61 * * * *","command":"x"}`, "invalid_parameter", "schedule", 400},
		{`{"name":"a","schedule":"@every 5m","command":"x"}`, "invalid_parameter", "schedule", 400},
		{`{"name":"a","schedule":"0 0 30 2 *","command":"x"}`, "invalid_parameter", "schedule", 400},
		{`{"name":"a","schedule":"@daily","timezone":"Moon/Base","command":"x"}`, "invalid_parameter", "timezone", 400},
		{`{"name":"a","schedule":"@daily","timezone":"Local","command":"x"}`, "invalid_parameter", "timezone", 400},
		{`{"name":"a","schedule":"@daily","command":""}`, "invalid_parameter", "command", 400},
		{`{"name":"a","schedule":"@daily"}`, "invalid_parameter", "command", 400},
		{`{"name":"a","schedule":"@daily","command":"x","concurrencyPolicy":"queue"}`, "invalid_parameter", "concurrencyPolicy", 400},
		{`{"name":"a","schedule":"@daily","command":"x","timeoutSeconds":0}`, "invalid_parameter", "timeoutSeconds", 400},
		{`{"name":"a","schedule":"@daily","command":"x","timeoutSeconds":"60"}`, "invalid_parameter", "timeoutSeconds", 400},
		{`{"name":"a","schedule":"@daily","command":"x","timeoutSeconds":901}`, "invalid_parameter", "timeoutSeconds", 400},
		{`{"name":"a","schedule":"*/30 * * * *","command":"x"}`, "cron_interval_too_short", "", 403},
		{`not json`, "invalid_body", "", 400},
	} {
		status, out := e.cronCall("POST", "/api/apps/svc/crons", c.body)
		if status != c.status || out["code"] != c.code || (c.field != "" && out["field"] != c.field) {
			t.Errorf("%s: %d %v, want %d %s %s", c.body, status, out, c.status, c.code, c.field)
		}
	}
	status, out := e.cronCall("POST", "/api/apps/svc/crons", `{"name":"a","schedule":"@daily","command":"x","timeoutSeconds":901}`)
	if out["limit"] != float64(900) {
		t.Errorf("timeout over the plan: %d %v", status, out)
	}
	status, out = e.cronCall("POST", "/api/apps/svc/crons", `{"name":"a","schedule":"*/30 * * * *","command":"x"}`)
	if out["limit"] != float64(60) || out["plan"] != "songbird" {
		t.Errorf("interval: %d %v", status, out)
	}
	e.addCron("svc", `{"name":"a","schedule":"@daily","command":"x"}`)
	e.addCron("svc", `{"name":"b","schedule":"@daily","command":"x"}`)
	status, out = e.cronCall("POST", "/api/apps/svc/crons", `{"name":"c","schedule":"@daily","command":"x"}`)
	if status != http.StatusForbidden || out["code"] != "cron_job_limit_reached" || out["limit"] != float64(2) {
		t.Errorf("third job: %d %v", status, out)
	}
	for _, m := range []string{"GET", "POST"} {
		status, out = e.cronCall(m, "/api/apps/site/crons", `{"name":"a","schedule":"@daily","command":"x"}`)
		if status != http.StatusConflict || out["code"] != "not_a_service" {
			t.Errorf("%s on a static app: %d %v", m, status, out)
		}
	}
	if status, out := e.cronCall("GET", "/api/apps/svc/crons/a/runs?limit=0", ""); status != http.StatusBadRequest || out["field"] != "limit" {
		t.Errorf("limit 0: %d %v", status, out)
	}
	if status, _ := e.cronCall("GET", "/api/apps/nope/crons", ""); status != http.StatusNotFound {
		t.Errorf("unknown app: %d", status)
	}
}

// nextRunAt of a daily job follows its zone, across daylight saving both ways.
func TestCronNextRunAtInAZone(t *testing.T) {
	e := newEnv(t, testPlan)
	e.serviceWithLive("svc")
	for i, c := range []struct {
		now, schedule, zone, want string
	}{
		{"2026-11-22T03:00:00Z", "0 9 * * *", "Asia/Tokyo", "2026-11-23T00:00:00.000Z"},
		// New York springs forward on 2026-03-08: 02:30 does not exist, the job runs at 03:00 EDT.
		{"2026-03-07T12:00:00Z", "30 2 * * *", "America/New_York", "2026-03-08T07:00:00.000Z"},
		// Prague falls back on 2026-10-25: 02:30 happens twice, the job runs the first time.
		{"2026-10-24T12:00:00Z", "30 2 * * *", "Europe/Prague", "2026-10-25T00:30:00.000Z"},
	} {
		e.clock.Set(utcTime(c.now))
		name := fmt.Sprintf("job%d", i)
		job := e.addCron("svc", fmt.Sprintf(`{"name":%q,"schedule":%q,"timezone":%q,"command":"x"}`, name, c.schedule, c.zone))
		if job["nextRunAt"] != c.want {
			t.Errorf("%s in %s from %s: nextRunAt %v, want %s", c.schedule, c.zone, c.now, job["nextRunAt"], c.want)
		}
		e.cronCall("DELETE", "/api/apps/svc/crons/"+name, "")
	}
	// The spring-forward tick fires at 03:00 EDT and the next one is back at 02:30.
	e.clock.Set(utcTime("2026-03-07T12:00:00Z"))
	e.addCron("svc", `{"name":"spring","schedule":"30 2 * * *","timezone":"America/New_York","command":"x"}`)
	e.clock.Set(utcTime("2026-03-08T07:00:10Z"))
	e.fireDue()
	runs := e.cronRuns("svc", "spring")
	if len(runs) != 1 || runs[0]["scheduledFor"] != "2026-03-08T07:00:00.000Z" || runs[0]["status"] != "pending" {
		t.Fatalf("spring-forward runs: %v", runs)
	}
	if _, out := e.cronCall("GET", "/api/apps/svc/crons/spring", ""); out["nextRunAt"] != "2026-03-09T06:30:00.000Z" {
		t.Fatalf("after the spring-forward tick: %v", out["nextRunAt"])
	}
}

func utcTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestManualRunsUnderForbid(t *testing.T) {
	e := newEnv(t, testPlan)
	_, live := e.serviceWithLive("svc")
	e.addCron("svc", `{"name":"job","schedule":"@daily","command":"bin/job","timeoutSeconds":120}`)

	status, run := e.cronCall("POST", "/api/apps/svc/crons/job/runs", "")
	if status != http.StatusCreated || run["trigger"] != "manual" || run["status"] != "pending" || run["deployId"] != live ||
		run["scheduledFor"] != "2026-11-22T03:00:00.000Z" || run["skipReason"] != nil || run["exitCode"] != nil {
		t.Fatalf("first manual run: %d %v", status, run)
	}
	var start zonev1.StartCronRun
	e.lastOutbox("zone.local.cron_run", &start)
	if start.GetRunId() != run["id"] || start.GetJob() != "job" || start.GetCommand() != "bin/job" || start.GetTimeoutSeconds() != 120 || start.GetDeployId() != live {
		t.Fatalf("StartCronRun: %v", &start)
	}
	status, out := e.cronCall("POST", "/api/apps/svc/crons/job/runs", "")
	if status != http.StatusConflict || out["code"] != "run_in_progress" {
		t.Fatalf("second manual run: %d %v", status, out)
	}
	e.cronReport(run["id"].(string), zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING, -1)
	e.cronReport(run["id"].(string), zonev1.CronRunStatus_CRON_RUN_STATUS_SUCCEEDED, 0)
	_, job := e.cronCall("GET", "/api/apps/svc/crons/job", "")
	last := job["lastRun"].(map[string]any)
	if last["status"] != "succeeded" || last["exitCode"] != float64(0) || last["startedAt"] == nil || last["finishedAt"] == nil {
		t.Fatalf("lastRun after the zone's reports: %v", last)
	}
	if status, _ := e.cronCall("POST", "/api/apps/svc/crons/job/runs", ""); status != http.StatusCreated {
		t.Fatalf("a run after the first ended: %d", status)
	}
}

func TestManualRunRefusals(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "fresh", "service") // never deployed
	e.addCron("fresh", `{"name":"job","schedule":"@daily","command":"x"}`)
	if status, out := e.cronCall("POST", "/api/apps/fresh/crons/job/runs", ""); status != http.StatusConflict || out["code"] != "no_live_deploy" {
		t.Fatalf("no live deploy: %d %v", status, out)
	}

	e.serviceWithLive("svc")
	e.addCron("svc", `{"name":"job","schedule":"@daily","command":"x"}`)
	day := 24 * time.Hour
	since := e.clock.Now().Add(-8 * day)
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.SaveHold(context.Background(), tx, e.account, deploy.Hold{Active: true, Hold: billinghold.From(since), Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, out := e.cronCall("POST", "/api/apps/svc/crons/job/runs", ""); status != http.StatusPaymentRequired || out["code"] != "billing_hold" {
		t.Fatalf("under a hold: %d %v", status, out)
	}
	// A tick under the hold leaves a skipped run.
	e.clock.Set(utcTime("2026-11-23T00:00:30Z"))
	e.fireDue()
	if runs := e.cronRuns("svc", "job"); len(runs) != 1 || runs[0]["status"] != "skipped" || runs[0]["skipReason"] != "hold" {
		t.Fatalf("tick under a hold: %v", runs)
	}
}

// A tick while a run is in progress under forbid leaves skipped/overlap; under replace it
// cancels the running one.
func TestTicksAndConcurrencyPolicies(t *testing.T) {
	e := newEnv(t, testPlan)
	e.serviceWithLive("svc")
	e.addCron("svc", `{"name":"hourly","schedule":"0 * * * *","command":"x"}`)
	e.addCron("svc", `{"name":"swap","schedule":"0 * * * *","command":"x","concurrencyPolicy":"replace"}`)

	_, manual := e.cronCall("POST", "/api/apps/svc/crons/hourly/runs", "")
	e.cronReport(manual["id"].(string), zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING, -1)
	_, old := e.cronCall("POST", "/api/apps/svc/crons/swap/runs", "")

	e.clock.Set(utcTime("2026-11-22T04:00:05Z"))
	e.fireDue()
	e.fireDue() // a second pass fires nothing again
	runs := e.cronRuns("svc", "hourly")
	if len(runs) != 2 || runs[0]["status"] != "skipped" || runs[0]["skipReason"] != "overlap" || runs[0]["trigger"] != "scheduled" ||
		runs[0]["scheduledFor"] != "2026-11-22T04:00:00.000Z" || runs[1]["status"] != "running" {
		t.Fatalf("forbid during a running run: %v", runs)
	}
	swapped := e.cronRuns("svc", "swap")
	if len(swapped) != 2 || swapped[0]["status"] != "pending" || swapped[1]["id"] != old["id"] || swapped[1]["status"] != "cancelled" {
		t.Fatalf("replace: %v", swapped)
	}
	var cancel zonev1.CancelCronRun
	e.lastOutbox("zone.local.cron_cancel", &cancel)
	if cancel.GetRunId() != old["id"] {
		t.Fatalf("CancelCronRun: %v", &cancel)
	}
	// The zone's own CANCELLED arrives later and changes nothing.
	e.cronReport(old["id"].(string), zonev1.CronRunStatus_CRON_RUN_STATUS_CANCELLED, -1)

	// The manual run ends; three hours pass with nothing firing: the missed ticks leave
	// rows, and the latest, 10 minutes late, is missed too.
	e.cronReport(manual["id"].(string), zonev1.CronRunStatus_CRON_RUN_STATUS_FAILED, 2)
	e.clock.Set(utcTime("2026-11-22T07:10:00Z"))
	e.fireDue()
	runs = e.cronRuns("svc", "hourly")
	if len(runs) != 5 {
		t.Fatalf("after missed ticks: %v", runs)
	}
	for i, at := range []string{"2026-11-22T07:00:00.000Z", "2026-11-22T06:00:00.000Z", "2026-11-22T05:00:00.000Z"} {
		if runs[i]["scheduledFor"] != at || runs[i]["skipReason"] != "missed" {
			t.Fatalf("missed tick %d: %v", i, runs[i])
		}
	}
	if runs[4]["status"] != "failed" || runs[4]["exitCode"] != float64(2) {
		t.Fatalf("the manual run: %v", runs[4])
	}
	// Next hour, on time, it runs; disabled, the hour after leaves skipped/disabled.
	e.clock.Set(utcTime("2026-11-22T08:00:30Z"))
	e.fireDue()
	if runs = e.cronRuns("svc", "hourly"); runs[0]["status"] != "pending" || runs[0]["scheduledFor"] != "2026-11-22T08:00:00.000Z" {
		t.Fatalf("on time: %v", runs[0])
	}
	e.cronCall("PATCH", "/api/apps/svc/crons/hourly", `{"enabled":false}`)
	e.clock.Set(utcTime("2026-11-22T09:00:30Z"))
	e.fireDue()
	if runs = e.cronRuns("svc", "hourly"); runs[0]["status"] != "skipped" || runs[0]["skipReason"] != "disabled" {
		t.Fatalf("disabled: %v", runs[0])
	}

	// The zone never reports on the 08:00 run: past its timeout plus two minutes it fails.
	pending := runs[1]["id"].(string)
	e.cronReport(pending, zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING, -1)
	// The RUNNING report came at 09:00:30: the timeout (900 s) and two minutes end at 09:17:30.
	runStatus := func() (status, message string) {
		e.pool.QueryRow(context.Background(), `SELECT status, coalesce(message, '') FROM cron_runs WHERE id = $1`, pending).Scan(&status, &message)
		return status, message
	}
	e.clock.Set(utcTime("2026-11-22T09:17:00Z"))
	if _, err := e.crons.FailUnreported(context.Background()); err != nil {
		t.Fatal(err)
	}
	if status, _ := runStatus(); status != "running" {
		t.Fatalf("failed before its timeout and grace: %s", status)
	}
	e.clock.Set(utcTime("2026-11-22T09:18:00Z"))
	if n, err := e.crons.FailUnreported(context.Background()); err != nil || n < 1 {
		t.Fatalf("fail unreported: %d %v", n, err)
	}
	if status, message := runStatus(); status != "failed" || message != "the zone did not report" {
		t.Fatalf("unreported run: %s %q", status, message)
	}
}

func TestPendingRunTheZoneNeverStartedFails(t *testing.T) {
	e := newEnv(t, testPlan)
	e.serviceWithLive("svc")
	e.addCron("svc", `{"name":"job","schedule":"@daily","command":"x"}`)
	_, run := e.cronCall("POST", "/api/apps/svc/crons/job/runs", "")
	e.clock.Advance(2 * time.Minute)
	if n, _ := e.crons.FailUnreported(context.Background()); n != 0 {
		t.Fatalf("failed at exactly two minutes")
	}
	e.clock.Advance(time.Second)
	if n, err := e.crons.FailUnreported(context.Background()); err != nil || n != 1 {
		t.Fatalf("fail unreported: %d %v", n, err)
	}
	if runs := e.cronRuns("svc", "job"); runs[0]["id"] != run["id"] || runs[0]["status"] != "failed" {
		t.Fatalf("after the sweep: %v", runs)
	}
}

func TestAppDeletionRemovesCronJobs(t *testing.T) {
	e := newEnv(t, testPlan)
	appID, _ := e.serviceWithLive("svc")
	e.addCron("svc", `{"name":"job","schedule":"@daily","command":"x"}`)
	_, run := e.cronCall("POST", "/api/apps/svc/crons/job/runs", "")
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error { return e.svc.OnAppDeleted(context.Background(), tx, appID) })
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := e.cronCall("GET", "/api/apps/svc/crons", ""); status != http.StatusNotFound {
		t.Fatalf("crons of a deleted app: %d", status)
	}
	e.clock.Set(utcTime("2026-11-23T00:00:10Z"))
	e.fireDue() // the deleted app's job is due but not fired
	if n, err := e.crons.RemoveCronsOfDeletedApps(context.Background()); err != nil || n != 1 {
		t.Fatalf("remove: %d %v", n, err)
	}
	var jobs, runs int
	e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM cron_jobs), (SELECT count(*) FROM cron_runs)`).Scan(&jobs, &runs)
	if jobs != 0 || runs != 0 {
		t.Fatalf("left behind: %d jobs %d runs", jobs, runs)
	}
	var cancel zonev1.CancelCronRun
	e.lastOutbox("zone.local.cron_cancel", &cancel)
	if cancel.GetRunId() != run["id"] {
		t.Fatalf("CancelCronRun: %v", &cancel)
	}
}
