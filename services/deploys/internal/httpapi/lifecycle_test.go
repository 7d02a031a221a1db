package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

const (
	stepReady   = zonev1.DeployStep_DEPLOY_STEP_READY
	stepRelease = zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED
	stepFailed  = zonev1.DeployStep_DEPLOY_STEP_FAILED
	stepActive  = zonev1.DeployStep_DEPLOY_STEP_ACTIVATED
)

// goLive reports the revision ready and then, as its zone does once the edge serves it,
// activated.
func (e *env) goLive(id string) {
	e.t.Helper()
	e.report(id, stepReady, "")
	e.report(id, stepActive, "")
}

func (e *env) deployStatic(slug, content string) string {
	e.t.Helper()
	status, body, _ := e.upload(e.account, slug, file("index.html", content))
	if status != http.StatusCreated {
		e.t.Fatalf("deploy: %d %v", status, body)
	}
	return body["id"].(string)
}

func TestListNewestFirstWithLimitAndBefore(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, e.deployStatic("site", "v"))
		e.clock.Advance(time.Second)
	}
	list := func(q string) (int, []any) {
		status, body, _ := e.request(e.account, "GET", "/api/apps/site/deploys"+q, "", nil, 0)
		l, _ := body["list"].([]any)
		return status, l
	}
	id := func(v any) string { return v.(map[string]any)["id"].(string) }
	status, all := list("")
	if status != 200 || len(all) != 3 || id(all[0]) != ids[2] || id(all[2]) != ids[0] {
		t.Fatalf("list: %d %v", status, all)
	}
	if _, page := list("?limit=2"); len(page) != 2 || id(page[1]) != ids[1] {
		t.Fatalf("limit=2: %v", page)
	}
	if _, page := list("?limit=2&before=" + ids[1]); len(page) != 1 || id(page[0]) != ids[0] {
		t.Fatalf("before: %v", page)
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?before=not-a-deploy"} {
		status, body, _ := e.request(e.account, "GET", "/api/apps/site/deploys"+q, "", nil, 0)
		if status != 400 || body["code"] != "invalid_parameter" {
			t.Errorf("%s: %d %v", q, status, body)
		}
	}
	if status, body, _ := e.request(e.account, "GET", "/api/apps/site/deploys/"+ids[1], "", nil, 0); status != 200 || body["id"] != ids[1] {
		t.Fatalf("get: %d %v", status, body)
	}
	for _, bad := range []string{"nope", "0192f000-0000-7000-8000-000000000000"} {
		if status, _, _ := e.request(e.account, "GET", "/api/apps/site/deploys/"+bad, "", nil, 0); status != 404 {
			t.Errorf("get %s: %d", bad, status)
		}
	}
	if status, _, _ := e.request("someone-else", "GET", "/api/apps/site/deploys/"+ids[1], "", nil, 0); status != 404 {
		t.Error("another account sees the deploy")
	}
}

func TestZoneReportsDriveTheStateMachine(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	a := e.deployStatic("site", "a")
	e.report(a, stepRelease, "")
	if e.status(a) != "releasing" {
		t.Fatal(e.status(a))
	}
	// Ready is not live: the zone is told to switch, and the deploy stays releasing until
	// the zone reports that its edge serves the revision. Meanwhile it is no longer the
	// customer's to cancel.
	e.report(a, stepReady, "")
	e.report(a, stepReady, "") // a redelivered report asks nothing more
	if e.status(a) != "releasing" {
		t.Fatalf("ready before activation: %s", e.status(a))
	}
	if keys := e.outboxKeys(); contains(keys, "deploys.deploy.live") || count(keys, "zone.local.activate") != 1 {
		t.Fatalf("after ready: %v", keys)
	}
	if status, body, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+a+"/cancel", "", nil, 0); status != http.StatusConflict || body["code"] != "not_cancellable" {
		t.Fatalf("cancel while switching: %d %v", status, body)
	}
	e.report(a, stepActive, "")
	e.report(a, stepActive, "") // a redelivered report changes nothing
	if e.status(a) != "live" || count(e.outboxKeys(), "deploys.deploy.live") != 1 {
		t.Fatalf("after activation: %s %v", e.status(a), e.outboxKeys())
	}
	b := e.deployStatic("site", "b")
	e.goLive(b)
	if e.status(b) != "live" || e.status(a) != "superseded" {
		t.Fatalf("b %s a %s", e.status(b), e.status(a))
	}
	c := e.deployStatic("site", "c")
	e.report(c, stepFailed, "release_failed")
	_, body, _ := e.request(e.account, "GET", "/api/apps/site/deploys/"+c, "", nil, 0)
	if body["status"] != "failed" || body["error"] != "release_failed" || body["finishedAt"] == nil {
		t.Fatalf("failed deploy: %v", body)
	}
	if e.status(b) != "live" {
		t.Fatal("a failed release must leave the previous revision live")
	}
	keys := e.outboxKeys()
	for _, k := range []string{"deploys.deploy.status_changed", "deploys.deploy.live", "zone.local.activate"} {
		if !contains(keys, k) {
			t.Errorf("%s not published: %v", k, keys)
		}
	}
}

// An older deploy that becomes ready after a newer one went live is cancelled, never live.
func TestOlderDeployNeverGoesLiveOverNewer(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	older := e.deployStatic("site", "old")
	e.clock.Advance(time.Millisecond)
	newer := e.deployStatic("site", "new")
	e.goLive(newer)
	e.goLive(older)
	if e.status(newer) != "live" || e.status(older) != "cancelled" {
		t.Fatalf("newer %s older %s", e.status(newer), e.status(older))
	}
	if !contains(e.outboxKeys(), "zone.local.discard") {
		t.Fatal("the zone was not told to discard the older revision")
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	a := e.deployStatic("site", "a")
	status, body, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+a+"/cancel", "", nil, 0)
	if status != 200 || body["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", status, body)
	}
	// A cancelled revision never goes live, even if its zone reports it ready afterwards.
	e.goLive(a)
	if e.status(a) != "cancelled" {
		t.Fatal(e.status(a))
	}
	status, body, _ = e.request(e.account, "POST", "/api/apps/site/deploys/"+a+"/cancel", "", nil, 0)
	if status != http.StatusConflict || body["code"] != "not_cancellable" {
		t.Fatalf("second cancel: %d %v", status, body)
	}
	b := e.deployStatic("site", "b")
	e.report(b, stepRelease, "")
	if status, _, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+b+"/cancel", "", nil, 0); status != 200 {
		t.Fatalf("cancel while releasing: %d", status)
	}
	c := e.deployStatic("site", "c")
	e.goLive(c)
	if status, _, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+c+"/cancel", "", nil, 0); status != http.StatusConflict {
		t.Fatalf("cancel live: %d", status)
	}
}

func TestRollback(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	a := e.deployStatic("site", "a")
	e.goLive(a)
	b := e.deployStatic("site", "b")
	e.goLive(b)
	status, body, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+a+"/rollback", "", nil, 0)
	if status != http.StatusCreated || body["rollbackOf"] != a || body["status"] != "building" || body["id"] == a {
		t.Fatalf("rollback: %d %v", status, body)
	}
	r := body["id"].(string)
	var keyA, keyR string
	e.pool.QueryRow(context.Background(), `SELECT artifact_key FROM deploys WHERE id = $1`, a).Scan(&keyA)
	e.pool.QueryRow(context.Background(), `SELECT artifact_key FROM deploys WHERE id = $1`, r).Scan(&keyR)
	if keyA == "" || keyA != keyR {
		t.Fatalf("rollback artifact %q, want %q", keyR, keyA)
	}
	e.goLive(r)
	if e.status(r) != "live" || e.status(b) != "superseded" {
		t.Fatalf("r %s b %s", e.status(r), e.status(b))
	}
	// A deploy that never went live cannot be rolled back to.
	c := e.deployStatic("site", "c")
	e.report(c, stepFailed, "build_failed")
	status, body, _ = e.request(e.account, "POST", "/api/apps/site/deploys/"+c+"/rollback", "", nil, 0)
	if status != http.StatusConflict || body["code"] != "not_rollbackable" {
		t.Fatalf("rollback of failed: %d %v", status, body)
	}
}

// The 20-minute close, driven by an injected clock.
func TestDeadlineClosesOpenDeploys(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	a := e.deployStatic("site", "a")
	b := e.deployStatic("site", "b")
	e.goLive(b)
	e.clock.Advance(20*time.Minute - time.Millisecond)
	if n, err := e.svc.CloseOverdue(context.Background()); err != nil || n != 0 {
		t.Fatalf("closed %d before the deadline (%v)", n, err)
	}
	e.clock.Advance(time.Millisecond)
	if n, err := e.svc.CloseOverdue(context.Background()); err != nil || n != 1 {
		t.Fatalf("closed %d at the deadline (%v)", n, err)
	}
	_, body, _ := e.request(e.account, "GET", "/api/apps/site/deploys/"+a, "", nil, 0)
	if body["status"] != "failed" || body["error"] != "deadline_exceeded" {
		t.Fatalf("after deadline: %v", body)
	}
	if e.status(b) != "live" {
		t.Fatal("the deadline must not touch a live deploy")
	}
	// A late ready report cannot revive it.
	e.goLive(a)
	if e.status(a) != "failed" {
		t.Fatal(e.status(a))
	}
}

func TestImageDeployUnchangedAnswersLiveDeploy(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	img := `"ghcr.io/acme/web@sha256:` + digest() + `"`
	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":`+img+`,"release":"bin/migrate --yes"}`)
	if status != 201 || body["kind"] != "image" || len(body["release"].([]any)) != 2 {
		t.Fatalf("image deploy: %d %v", status, body)
	}
	first := body["id"].(string)
	e.goLive(first)
	status, body, _ = e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":`+img+`}`)
	if status != http.StatusOK || body["id"] != first {
		t.Fatalf("unchanged: %d %v", status, body)
	}
	if e.rows() != 1 {
		t.Fatal("an unchanged deploy created a row")
	}
	status, body, _ = e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":`+img+`,"forceRestart":true}`)
	if status != 201 || body["id"] == first {
		t.Fatalf("forceRestart: %d %v", status, body)
	}
	e.goLive(body["id"].(string))
	e.env.set("A=2")
	if status, _, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":`+img+`}`); status != 201 {
		t.Fatalf("changed environment: %d", status)
	}
	var sealed []byte
	e.pool.QueryRow(context.Background(), `SELECT env_sealed FROM deploys ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&sealed)
	if len(sealed) == 0 {
		t.Fatal("service deploy stored no snapshot")
	}
}

func TestSweepRemovesOnlyUnreferencedArtifacts(t *testing.T) {
	e := newEnv(t, testPlan)
	appID := e.addApp(e.account, "site", "static")
	e.deployStatic("site", "a")
	orphan := filepath.Join(e.objDir, "artifacts", appID, "orphan.tar")
	if err := os.WriteFile(orphan, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Both are past the grace: only the reference keeps the deploy's artifact.
	old := time.Now().Add(-time.Hour)
	for _, f := range e.files() {
		os.Chtimes(f, old, old)
	}
	e.clock.Set(time.Now())
	if n, err := e.svc.SweepArtifacts(context.Background(), 10*time.Minute); err != nil || n != 1 {
		t.Fatalf("swept %d (%v)", n, err)
	}
	if len(e.files()) != 1 {
		t.Fatalf("left %v", e.files())
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// Activation reports that cross (a newer revision switched in just after an older one, its
// report handled first) never put the older one back: it is closed, and the newer stays live.
func TestCrossedActivationReportsKeepTheNewerLive(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	older := e.deployStatic("site", "old")
	e.clock.Advance(time.Millisecond)
	newer := e.deployStatic("site", "new")
	e.report(older, stepReady, "")
	e.report(newer, stepReady, "")
	e.report(newer, stepActive, "")
	e.report(older, stepActive, "")
	if e.status(newer) != "live" || e.status(older) != "cancelled" {
		t.Fatalf("newer %s older %s", e.status(newer), e.status(older))
	}
}
