package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/contract/billinghold"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// Every malformed preview request is a 400 naming its member, before a hold's 402 and the
// plan's 403, and leaves nothing behind.
func TestPreviewRefusalsAndTheirOrder(t *testing.T) {
	e := newEnv(t, usecase.Plan{Name: "nestling", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 20, MinScale: 1, CPU: 1,
		Previews: 1, PreviewMaxTTLHours: 24})
	e.addApp(e.account, "svc", "service")
	for _, c := range []struct {
		name, members, code, param string
	}{
		{"a name out of pattern", `"name":"Bad_Name"`, "invalid_parameter", "name"},
		{"an empty name", `"name":""`, "invalid_parameter", "name"},
		{"a name too long", `"name":"` + strings.Repeat("a", 21) + `"`, "invalid_parameter", "name"},
		{"a name not a string", `"name":12`, "invalid_parameter", "name"},
		{"ttl under a minute", `"ttlSeconds":59`, "invalid_parameter", "ttlSeconds"},
		{"ttl a fraction", `"ttlSeconds":90.5`, "invalid_parameter", "ttlSeconds"},
		{"ttl a string", `"ttlSeconds":"3600"`, "invalid_parameter", "ttlSeconds"},
		{"ttl past int64", `"ttlSeconds":99999999999999999999`, "invalid_parameter", "ttlSeconds"},
		{"an unknown database", `"database":"maybe"`, "invalid_parameter", "database"},
		{"env not an object", `"env":["A"]`, "invalid_parameter", "env"},
		{"env a number value", `"env":{"A":1}`, "invalid_parameter", "env"},
		{"env a bad key", `"env":{"lower":"x"}`, "invalid_parameter", "env"},
		{"env with NUL", `"env":{"A":"x\u0000y"}`, "invalid_parameter", "env"},
		{"DATABASE_URL with database none", `"env":{"DATABASE_URL":"postgres://x"}`, "invalid_parameter", "env"},
		{"DATABASE_RESTORE_URL by default", `"database":"none","env":{"DATABASE_RESTORE_URL":"x"}`, "invalid_parameter", "env"},
		{"a malformed image", `"image":"NOT AN IMAGE"`, "invalid_image", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := e.rows()
			body := `{"image":"` + imageRef() + `",` + c.members + `}`
			if strings.HasPrefix(c.members, `"image"`) {
				body = `{` + c.members + `}`
			}
			status, out, _ := e.postJSON(e.account, "/api/apps/svc/previews", body)
			if status != http.StatusBadRequest || out["code"] != c.code || (c.param != "" && !hasPrefix(out["message"], c.param+" ")) {
				t.Fatalf("%d %v, want 400 %s naming %s", status, out, c.code, c.param)
			}
			e.assertNothingBehind(rows)
		})
	}
	// DATABASE_URL may be overridden when the preview shares the database.
	shared := e.mustPreview("svc", `"name":"shared","database":"shared","env":{"DATABASE_URL":"postgres://other"}`, http.StatusCreated)
	if e.env.withoutDatabase || e.env.overrides["DATABASE_URL"] != "postgres://other" {
		t.Fatalf("shared database: without %v, overrides %v", e.env.withoutDatabase, e.env.overrides)
	}
	e.report(shared["deployId"].(string), stepReady, "")

	// The plan's one preview is taken: 403, and a malformed request still 400 first.
	if status, out := e.postPreview(e.account, "svc", `"name":"two"`); status != http.StatusForbidden ||
		out["code"] != "preview_limit_reached" || out["limit"] != float64(1) || out["plan"] != "nestling" {
		t.Fatalf("over the plan's previews: %d %v", status, out)
	}
	if status, out := e.postPreview(e.account, "svc", `"name":"two","ttlSeconds":1`); status != http.StatusBadRequest {
		t.Fatalf("malformed over the limit: %d %v", status, out)
	}
	// Under a hold from day 7: 402 before the 403, and 400 before both.
	since := e.clock.Now().Add(-8 * 24 * time.Hour)
	if err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.SaveHold(context.Background(), tx, e.account, deploy.Hold{Active: true, Hold: billinghold.From(since), Version: 1})
	}); err != nil {
		t.Fatal(err)
	}
	if status, out := e.postPreview(e.account, "svc", `"name":"three"`); status != http.StatusPaymentRequired || out["code"] != "billing_hold" {
		t.Fatalf("under a hold: %d %v", status, out)
	}
	if status, out := e.postPreview(e.account, "svc", `"ttlSeconds":1`); status != http.StatusBadRequest {
		t.Fatalf("malformed under a hold: %d %v", status, out)
	}
	// A promote is a deploy: refused under the hold too; deleting still works.
	if status, out, _ := e.request(e.account, "POST", "/api/apps/svc/previews/shared/promote", "", nil, 0); status != http.StatusPaymentRequired || out["code"] != "billing_hold" {
		t.Fatalf("promote under a hold: %d %v", status, out)
	}
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/svc/previews/shared", "", nil, 0); status != http.StatusNoContent {
		t.Fatalf("delete under a hold: %d", status)
	}
	// A static app takes no image preview.
	e.addApp(e.account, "site", "static")
	if status, out := e.postPreview(e.account, "site", ""); status != http.StatusBadRequest || out["code"] != "kind_mismatch" {
		t.Fatalf("image preview of a static app: %d %v", status, out)
	}
}

// A preview: created (201) with its URL, never among the deploys; the same name again
// replaces it in place (200, same id and URL); read by id or name; its ttl extended and
// capped; deleted (204), after which it cannot be extended (409).
func TestPreviewCreateReplaceGetPatchDelete(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	live := e.liveImage("svc")
	created := e.mustPreview("svc", `"name":"pr-12","ttlSeconds":3600,"env":{"FEATURE_X":"on","A_FIRST":"1"}`, http.StatusCreated)
	id := created["id"].(string)
	now := e.clock.Now()
	if len(id) != 6 || created["name"] != "pr-12" || created["app"] != "svc" || created["url"] != "https://svc-"+id+".preview.apps.localhost" ||
		created["status"] != "deploying" || created["database"] != "none" || created["ttlSeconds"] != float64(3600) ||
		created["expiresAt"] != apitime.Format(now.Add(time.Hour)) || created["error"] != nil {
		t.Fatalf("created: %v", created)
	}
	if keys, _ := created["envKeys"].([]any); len(keys) != 2 || keys[0] != "A_FIRST" || keys[1] != "FEATURE_X" {
		t.Fatalf("envKeys (names only, sorted): %v", created["envKeys"])
	}
	if e.env.overrides["FEATURE_X"] != "on" || !e.env.withoutDatabase {
		t.Fatalf("snapshot asked with %v, without database %v", e.env.overrides, e.env.withoutDatabase)
	}
	first := created["deployId"].(string)
	starts := e.starts()
	if s := starts[len(starts)-1]; s.DeployId != first || s.PreviewId != id || s.Slug != "svc" || s.BuiltFromDeployId != "" {
		t.Fatalf("StartRevision: %v", s)
	}
	// Never among the deploys, nor reachable as one.
	_, list, _ := e.request(e.account, "GET", "/api/apps/svc/deploys", "", nil, 0)
	if l := list["list"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != live {
		t.Fatalf("deploys list shows a preview's revision: %v", l)
	}
	if status, _, _ := e.request(e.account, "GET", "/api/apps/svc/deploys/"+first, "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("GET a preview's revision as a deploy: %d", status)
	}
	if status, _, _ := e.request(e.account, "GET", "/api/apps/svc/deploys?before="+first, "", nil, 0); status != http.StatusBadRequest {
		t.Fatalf("a preview's revision as before: %d", status)
	}
	if status, _, _ := e.request(e.account, "POST", "/api/apps/svc/deploys/"+first+"/rollback", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("rollback to a preview's revision: %d", status)
	}
	if status, _, _ := e.request(e.account, "POST", "/api/apps/svc/deploys/"+first+"/cancel", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("cancel a preview's revision as a deploy: %d", status)
	}
	if e.keyCount(deploysbus.KeyDeployCreated) != 1 {
		t.Fatalf("a preview's revision announced as a deploy: %v", e.outboxKeys())
	}

	// The same name replaces it in place; the revision under way is cancelled.
	e.clock.Advance(time.Minute)
	again := e.mustPreview("svc", `"name":"pr-12","database":"shared"`, http.StatusOK)
	if again["id"] != id || again["url"] != created["url"] || again["deployId"] == first || again["database"] != "shared" ||
		len(again["envKeys"].([]any)) != 0 || again["createdAt"] != created["createdAt"] {
		t.Fatalf("replaced: %v", again)
	}
	if e.status(first) != "cancelled" {
		t.Fatalf("the replaced revision is %s", e.status(first))
	}
	// A preview without a name is named by its id; a ttl over the plan's is capped.
	e.clock.Advance(time.Second)
	unnamed := e.mustPreview("svc", `"ttlSeconds":100000000`, http.StatusCreated)
	if unnamed["name"] != unnamed["id"] || unnamed["ttlSeconds"] != float64(168*3600) {
		t.Fatalf("unnamed: %v", unnamed)
	}

	// By id and by name.
	for _, ref := range []string{id, "pr-12"} {
		if status, got := e.getPreview("svc", ref); status != http.StatusOK || got["id"] != id {
			t.Fatalf("GET %s: %d %v", ref, status, got)
		}
	}
	if status, _ := e.getPreview("svc", "nope00"); status != http.StatusNotFound {
		t.Fatalf("unknown preview: %d", status)
	}
	_, l, _ := e.request(e.account, "GET", "/api/apps/svc/previews", "", nil, 0)
	if got := l["list"].([]any); len(got) != 2 || got[0].(map[string]any)["id"] != unnamed["id"] {
		t.Fatalf("list newest first: %v", got)
	}

	// PATCH: from now, capped; under a minute refused.
	e.clock.Advance(time.Minute)
	status, patched, _ := e.request(e.account, "PATCH", "/api/apps/svc/previews/pr-12", "application/json", strings.NewReader(`{"ttlSeconds":7200}`), -1)
	if status != http.StatusOK || patched["expiresAt"] != apitime.Format(e.clock.Now().Add(2*time.Hour)) || patched["ttlSeconds"] != float64(7200) {
		t.Fatalf("PATCH: %d %v", status, patched)
	}
	for _, body := range []string{`{"ttlSeconds":10}`, `{}`, `{"ttlSeconds":"x"}`, `{"ttlSeconds":600,"name":"other"}`, `[600]`, `x`} {
		if status, out, _ := e.request(e.account, "PATCH", "/api/apps/svc/previews/"+id, "application/json", strings.NewReader(body), -1); status != http.StatusBadRequest {
			t.Fatalf("PATCH %s: %d %v", body, status, out)
		}
	}
	status, patched, _ = e.request(e.account, "PATCH", "/api/apps/svc/previews/"+id, "application/json", strings.NewReader(`{"ttlSeconds":99999999}`), -1)
	if status != http.StatusOK || patched["ttlSeconds"] != float64(168*3600) {
		t.Fatalf("PATCH over the cap: %d %v", status, patched)
	}

	// DELETE: 204, the zone told, gone from the list, 409 to a PATCH, still readable by id.
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/svc/previews/pr-12", "", nil, 0); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", status)
	}
	rm := e.removals()
	if len(rm) != 1 || rm[0].PreviewId != id || rm[0].Reason != "deleted" {
		t.Fatalf("RemovePreview: %v", rm)
	}
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/svc/previews/"+id, "", nil, 0); status != http.StatusNoContent || len(e.removals()) != 1 {
		t.Fatalf("DELETE again: %d, removals %d", status, len(e.removals()))
	}
	if status, got := e.getPreview("svc", id); status != http.StatusOK || got["status"] != "deleted" {
		t.Fatalf("deleted preview: %d %v", status, got)
	}
	if status, out, _ := e.request(e.account, "PATCH", "/api/apps/svc/previews/"+id, "application/json", strings.NewReader(`{"ttlSeconds":7200}`), -1); status != http.StatusConflict || out["code"] != "preview_expired" {
		t.Fatalf("PATCH a deleted preview: %d %v", status, out)
	}
	_, l, _ = e.request(e.account, "GET", "/api/apps/svc/previews", "", nil, 0)
	if got := l["list"].([]any); len(got) != 1 {
		t.Fatalf("list after delete: %v", got)
	}
	// The name is free again: a new preview with a new id.
	if fresh := e.mustPreview("svc", `"name":"pr-12"`, http.StatusCreated); fresh["id"] == id {
		t.Fatalf("a deleted preview came back: %v", fresh)
	}
	// The app itself never moved.
	if e.status(live) != "live" {
		t.Fatalf("live deploy is %s", e.status(live))
	}
}

// The plan's previews count deploying and ready ones; a replacement does not count again,
// a failed one is not counted (replacing it counts again), and a deleted one frees its place.
func TestPreviewLimitCountsActivePreviews(t *testing.T) {
	e := newEnv(t, previewPlan) // two
	e.addApp(e.account, "svc", "service")
	e.mustPreview("svc", `"name":"a"`, http.StatusCreated)
	e.mustPreview("svc", `"name":"b"`, http.StatusCreated)
	if status, out := e.postPreview(e.account, "svc", `"name":"c"`); status != http.StatusForbidden || out["code"] != "preview_limit_reached" {
		t.Fatalf("third: %d %v", status, out)
	}
	a := e.mustPreview("svc", `"name":"a"`, http.StatusOK)
	e.report(a["deployId"].(string), stepFailed, "build_failed")
	if _, got := e.getPreview("svc", "a"); got["status"] != "failed" || got["error"].(map[string]any)["code"] != "build_failed" {
		t.Fatalf("failed preview: %v", got)
	}
	e.mustPreview("svc", `"name":"c"`, http.StatusCreated)
	if status, _ := e.postPreview(e.account, "svc", `"name":"a"`); status != http.StatusForbidden {
		t.Fatalf("replacing a failed preview over the limit: %d", status)
	}
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/svc/previews/c", "", nil, 0); status != http.StatusNoContent {
		t.Fatal("delete c")
	}
	e.mustPreview("svc", `"name":"d"`, http.StatusCreated)
}

// Another team's preview is not found, whatever the route; so is a preview of another app.
func TestPreviewOwnership(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	e.addApp(e.account, "other", "service")
	p := e.mustPreview("svc", `"name":"mine"`, http.StatusCreated)
	id := p["id"].(string)
	stranger := "stranger-" + id
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/apps/svc/previews", ""},
		{"GET", "/api/apps/svc/previews/" + id, ""},
		{"PATCH", "/api/apps/svc/previews/" + id, `{"ttlSeconds":600}`},
		{"DELETE", "/api/apps/svc/previews/" + id, ""},
		{"POST", "/api/apps/svc/previews/" + id + "/promote", ""},
		{"POST", "/api/apps/svc/previews", `{"image":"` + imageRef() + `"}`},
	} {
		ct := ""
		if r.body != "" {
			ct = "application/json"
		}
		if status, out, _ := e.request(stranger, r.method, r.path, ct, strings.NewReader(r.body), int64(len(r.body))); status != http.StatusNotFound {
			t.Errorf("%s %s as another team: %d %v", r.method, r.path, status, out)
		}
	}
	if status, _ := e.getPreview("other", id); status != http.StatusNotFound {
		t.Errorf("the preview under another app: %d", status)
	}
	if status, got := e.getPreview("svc", id); status != http.StatusOK || got["status"] != "deploying" {
		t.Fatalf("after the stranger: %d %v", status, got)
	}
}

// A preview's READY: the zone is told to serve it at the preview's host (preview_id), the
// preview turns ready, and the app's live deploy, its status events and its formation are
// untouched. A replacement's READY swaps; the env stays open only to the served revisions.
func TestPreviewReadyActivatesWithoutTouchingTheApp(t *testing.T) {
	e := newEnv(t, previewPlan)
	appID := e.addApp(e.account, "svc", "service")
	live := e.liveImage("svc")
	activations, statusEvents, liveEvents := len(e.activations()), e.keyCount(deploysbus.KeyDeployStatusChanged), e.keyCount(deploysbus.KeyDeployLive)
	p := e.mustPreview("svc", `"name":"pr"`, http.StatusCreated)
	rev := p["deployId"].(string)
	hosted := func(deployID string) bool {
		t.Helper()
		_, ok, err := e.svc.Hosting(context.Background(), "local", appID, deployID)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !hosted(rev) {
		t.Fatal("a deploying preview revision is not hosted: env_open would refuse it")
	}
	e.report(rev, stepRelease, "")
	e.report(rev, stepReady, "")
	e.report(rev, stepReady, "") // repeated
	acts := e.activations()
	if len(acts) != activations+1 {
		t.Fatalf("activations: %d, want %d", len(acts), activations+1)
	}
	if a := acts[len(acts)-1]; a.DeployId != rev || a.PreviewId != p["id"] || a.AppId != appID || len(a.Formation) != 0 {
		t.Fatalf("ActivateRevision: %v", a)
	}
	if _, got := e.getPreview("svc", "pr"); got["status"] != "ready" || got["deployId"] != rev {
		t.Fatalf("preview after READY: %v", got)
	}
	// An ACTIVATED report changes nothing either.
	e.report(rev, stepActive, "")
	if e.status(live) != "live" || e.status(rev) != "previewing" {
		t.Fatalf("live %s, preview revision %s", e.status(live), e.status(rev))
	}
	if got := e.keyCount(deploysbus.KeyDeployStatusChanged); got != statusEvents {
		t.Fatalf("status events for a preview: %d → %d", statusEvents, got)
	}
	if got := e.keyCount(deploysbus.KeyDeployLive); got != liveEvents {
		t.Fatalf("live events for a preview: %d → %d", liveEvents, got)
	}
	var current string
	if err := e.pool.QueryRow(context.Background(), `SELECT deploy_id::text FROM formations WHERE app_id = $1`, appID).Scan(&current); err != nil || current != live {
		t.Fatalf("formation follows %s (%v), want %s", current, err, live)
	}
	if !hosted(rev) {
		t.Fatal("a ready preview's revision is not hosted")
	}

	// A replacement: the old revision serves (hosted) until the new one is ready.
	next := e.mustPreview("svc", `"name":"pr"`, http.StatusOK)["deployId"].(string)
	if !hosted(rev) || !hosted(next) {
		t.Fatal("the serving revision or its replacement is not hosted while the replacement deploys")
	}
	e.report(next, stepReady, "")
	if acts := e.activations(); acts[len(acts)-1].DeployId != next {
		t.Fatalf("the replacement was not activated: %v", acts[len(acts)-1])
	}
	if hosted(rev) {
		t.Fatal("a replaced revision is still hosted")
	}
	// Deleted: nothing of it is hosted.
	e.request(e.account, "DELETE", "/api/apps/svc/previews/pr", "", nil, 0)
	if hosted(next) {
		t.Fatal("a deleted preview's revision is hosted")
	}
}

// Promote: 409 while deploying, a normal deploy once ready (reusing the revision when the
// preview had no overrides), 409 once expired.
func TestPreviewPromote(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	e.liveImage("svc")
	plain := e.mustPreview("svc", `"name":"plain"`, http.StatusCreated)
	over := e.mustPreview("svc", `"name":"over","env":{"FEATURE_X":"on"}`, http.StatusCreated)
	promote := func(ref string) (int, map[string]any) {
		status, out, _ := e.request(e.account, "POST", "/api/apps/svc/previews/"+ref+"/promote", "", nil, 0)
		return status, out
	}
	if status, out := promote("plain"); status != http.StatusConflict || out["code"] != "preview_not_ready" {
		t.Fatalf("promote deploying: %d %v", status, out)
	}
	e.report(plain["deployId"].(string), stepReady, "")
	e.report(over["deployId"].(string), stepReady, "")
	before := e.env.previews
	status, d := promote("plain")
	if status != http.StatusCreated || d["status"] != "building" || d["kind"] != "image" {
		t.Fatalf("promote: %d %v", status, d)
	}
	if e.env.previews != before {
		t.Fatal("a promote took a preview's snapshot; it takes the app's live environment")
	}
	starts := e.starts()
	if s := starts[len(starts)-1]; s.DeployId != d["id"] || s.PreviewId != "" || s.BuiltFromDeployId != plain["deployId"] || s.Image != imageRef() ||
		strings.Contains(string(s.EnvSealed), "+preview") {
		t.Fatalf("promote's StartRevision: %v", s)
	}
	_, list, _ := e.request(e.account, "GET", "/api/apps/svc/deploys", "", nil, 0)
	if l := list["list"].([]any); l[0].(map[string]any)["id"] != d["id"] {
		t.Fatalf("the promote is not the newest deploy: %v", l)
	}
	e.goLive(d["id"].(string))
	if e.status(d["id"].(string)) != "live" {
		t.Fatal("the promote did not go live")
	}
	status, d2 := promote(over["id"].(string))
	if status != http.StatusCreated {
		t.Fatalf("promote with overrides: %d %v", status, d2)
	}
	if s := e.starts(); s[len(s)-1].BuiltFromDeployId != "" {
		t.Fatalf("a preview with overrides reused its revision: %v", s[len(s)-1])
	}
	e.clock.Advance(73 * time.Hour)
	if n, err := e.svc.ExpirePreviews(context.Background()); err != nil || n != 2 {
		t.Fatalf("expired %d, %v", n, err)
	}
	if status, out := promote("plain"); status != http.StatusConflict || out["code"] != "preview_expired" {
		t.Fatalf("promote expired: %d %v", status, out)
	}
}

// The sweep expires a preview past its time once, tells its zone, and leaves the others.
func TestPreviewSweepExpires(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	short := e.mustPreview("svc", `"name":"short","ttlSeconds":60`, http.StatusCreated)
	e.mustPreview("svc", `"name":"long","ttlSeconds":600`, http.StatusCreated)
	e.clock.Advance(59 * time.Second)
	if n, err := e.svc.ExpirePreviews(context.Background()); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	e.clock.Advance(time.Second)
	if n, err := e.svc.ExpirePreviews(context.Background()); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if n, _ := e.svc.ExpirePreviews(context.Background()); n != 0 {
		t.Fatalf("second sweep expired %d again", n)
	}
	rm := e.removals()
	if len(rm) != 1 || rm[0].PreviewId != short["id"] || rm[0].Reason != "expired" {
		t.Fatalf("RemovePreview: %v", rm)
	}
	if _, got := e.getPreview("svc", "short"); got["status"] != "expired" {
		t.Fatalf("short: %v", got)
	}
	if e.status(short["deployId"].(string)) != "cancelled" {
		t.Fatalf("the expired preview's revision under way is %s", e.status(short["deployId"].(string)))
	}
	if _, got := e.getPreview("svc", "long"); got["status"] != "deploying" {
		t.Fatalf("long: %v", got)
	}
	if status, out, _ := e.request(e.account, "PATCH", "/api/apps/svc/previews/short", "application/json", strings.NewReader(`{"ttlSeconds":600}`), -1); status != http.StatusConflict || out["code"] != "preview_expired" {
		t.Fatalf("PATCH expired: %d %v", status, out)
	}
}

// A static site's preview comes as a multipart body with its fields beside the files; a
// malformed field refuses after the body with nothing behind.
func TestPreviewMultipartStatic(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "site", "static")
	send := func(parts ...part) (int, map[string]any) {
		ct, body := multipartBody(parts...)
		status, out, _ := e.request(e.account, "POST", "/api/apps/site/previews", ct, bytes.NewReader(body), int64(len(body)))
		return status, out
	}
	field := func(name, value string) part { return part{`form-data; name="` + name + `"`, value} }
	rows := e.rows()
	if status, out := send(file("index.html", "x"), field("ttlSeconds", "soon")); status != http.StatusBadRequest || !hasPrefix(out["message"], "ttlSeconds ") {
		t.Fatalf("bad ttl: %d %v", status, out)
	}
	if status, out := send(field("name", "a"), field("name", "b"), file("index.html", "x")); status != http.StatusBadRequest || out["code"] != "invalid_body" {
		t.Fatalf("name twice: %d %v", status, out)
	}
	if status, out := send(file("index.html", "x"), field("env", `{"bad key":"x"}`)); status != http.StatusBadRequest || !hasPrefix(out["message"], "env ") {
		t.Fatalf("bad env: %d %v", status, out)
	}
	e.assertNothingBehind(rows)
	status, out := send(field("name", "feature"), file("index.html", "<h1>new</h1>"), field("ttlSeconds", "120"), field("database", "none"))
	if status != http.StatusCreated || out["name"] != "feature" || out["ttlSeconds"] != float64(120) || out["status"] != "deploying" {
		t.Fatalf("static preview: %d %v", status, out)
	}
	if e.env.previews != 0 {
		t.Fatal("a static preview asked for an environment")
	}
	s := e.starts()
	if st := s[len(s)-1]; st.PreviewId != out["id"] || st.Kind != "static" || !strings.HasPrefix(st.ArtifactKey, "artifacts/") {
		t.Fatalf("StartRevision: %v", st)
	}
	status, again := send(field("name", "feature"), file("index.html", "<h1>newer</h1>"))
	if status != http.StatusOK || again["id"] != out["id"] {
		t.Fatalf("replace by multipart: %d %v", status, again)
	}
}

// The app's deletion ends its previews (its zone removes them on apps.app.deleted itself),
// quietly for the app's deploys, and the cleanup purges them.
func TestAppDeletionDeletesPreviews(t *testing.T) {
	e := newEnv(t, previewPlan)
	appID := e.addApp(e.account, "svc", "service")
	p := e.mustPreview("svc", `"name":"gone"`, http.StatusCreated)
	statusEvents := e.keyCount(deploysbus.KeyDeployStatusChanged)
	if err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnAppDeleted(context.Background(), tx, appID)
	}); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := e.pool.QueryRow(context.Background(), `SELECT status FROM previews WHERE id = $1`, p["id"]).Scan(&status); err != nil || status != "deleted" {
		t.Fatalf("preview after the app's deletion: %s %v", status, err)
	}
	if e.status(p["deployId"].(string)) != "cancelled" || e.keyCount(deploysbus.KeyDeployStatusChanged) != statusEvents {
		t.Fatal("the preview's revision was not cancelled quietly")
	}
	if _, err := e.svc.CleanDeletedApps(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM previews WHERE app_id = $1`, appID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d previews left after cleanup (%v)", n, err)
	}
}

// Each preview change commits one audit entry naming the preview (a promote names the deploy
// it makes, with the preview beside it).
func TestPreviewChangesAreAudited(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	n := len(e.auditEntries())
	p := e.mustPreview("svc", `"name":"pr","env":{"SECRET_FLAG":"hunter2"}`, http.StatusCreated)
	id := p["id"].(string)
	got := e.expectEntry(n, "preview.create", "preview/"+id, "svc")
	if md := got.GetMetadata(); md["deployId"] != p["deployId"] || md["name"] != "pr" {
		t.Fatalf("metadata %v", md)
	}
	if strings.Contains(got.String(), "hunter2") {
		t.Fatal("an override's value reached the audit log")
	}
	n++
	if status, _, _ := e.request(e.account, "PATCH", "/api/apps/svc/previews/pr", "application/json", strings.NewReader(`{"ttlSeconds":600}`), -1); status != http.StatusOK {
		t.Fatal("patch")
	}
	e.expectEntry(n, "preview.update", "preview/"+id, "svc")
	n++
	e.report(p["deployId"].(string), stepReady, "")
	status, d, _ := e.request(e.account, "POST", "/api/apps/svc/previews/pr/promote", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("promote: %d %v", status, d)
	}
	if got := e.expectEntry(n, "preview.promote", "deploy/"+d["id"].(string), "svc"); got.GetMetadata()["preview"] != id {
		t.Fatalf("metadata %v", got.GetMetadata())
	}
	n++
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/svc/previews/pr", "", nil, 0); status != http.StatusNoContent {
		t.Fatal("delete")
	}
	e.expectEntry(n, "preview.delete", "preview/"+id, "svc")
}

// A source preview: the tarball and its release part as a deploy's, the preview's fields
// beside them; its snapshot is the preview's, with the overrides from the env field.
func TestPreviewMultipartSource(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "svc", "service")
	ct, body := multipartBody(
		part{`form-data; name="source"; filename="app.tar.gz"`, sourceTarball(t)},
		part{`form-data; name="release"`, "node migrate.js"},
		part{`form-data; name="env"`, `{"FEATURE_X":"on"}`},
		part{`form-data; name="database"`, "shared"},
		part{`form-data; name="name"`, "src"},
	)
	status, out, _ := e.request(e.account, "POST", "/api/apps/svc/previews", ct, bytes.NewReader(body), int64(len(body)))
	if status != http.StatusCreated || out["name"] != "src" || out["database"] != "shared" {
		t.Fatalf("source preview: %d %v", status, out)
	}
	if e.env.overrides["FEATURE_X"] != "on" || e.env.withoutDatabase {
		t.Fatalf("snapshot asked with %v, without database %v", e.env.overrides, e.env.withoutDatabase)
	}
	s := e.starts()
	st := s[len(s)-1]
	// No release job for a preview (given or the manifest's): release given, and empty.
	if st.PreviewId != out["id"] || st.Kind != "source" || !st.ReleaseGiven || len(st.Release) != 0 ||
		!strings.Contains(string(st.EnvSealed), "+preview") {
		t.Fatalf("StartRevision: %v", st)
	}
	// Its promote runs the release the preview was given.
	e.report(st.DeployId, stepReady, "")
	status, d, _ := e.request(e.account, "POST", "/api/apps/svc/previews/src/promote", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("promote: %d %v", status, d)
	}
	s = e.starts()
	if p := s[len(s)-1]; p.DeployId != d["id"] || !p.ReleaseGiven || strings.Join(p.Release, " ") != "node migrate.js" || p.BuiltFromDeployId != "" {
		t.Fatalf("promote's StartRevision: %v", p)
	}
}

// Stale previews leave nothing behind: a replaced revision and every revision of a preview
// that is gone lose their rows, and then their artifacts, while the revisions still served
// (and an artifact a promote shares) stay.
func TestPreviewRevisionsArePruned(t *testing.T) {
	e := newEnv(t, previewPlan)
	e.addApp(e.account, "site", "static")
	send := func(name, content string) map[string]any {
		t.Helper()
		ct, body := multipartBody(part{`form-data; name="name"`, name}, file("index.html", content))
		status, out, _ := e.request(e.account, "POST", "/api/apps/site/previews", ct, bytes.NewReader(body), int64(len(body)))
		if status != http.StatusCreated && status != http.StatusOK {
			t.Fatalf("preview: %d %v", status, out)
		}
		return out
	}
	a1 := send("a", "1")["deployId"].(string)
	e.report(a1, stepReady, "")
	a2 := send("a", "2")["deployId"].(string) // a1 serves while a2 deploys
	b := send("b", "1")
	e.report(b["deployId"].(string), stepReady, "")
	ctx := context.Background()
	if n, err := e.svc.PrunePreviewRevisions(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v) while every revision serves or deploys", n, err)
	}
	e.report(a2, stepReady, "") // a1 is replaced
	status, promoted, _ := e.request(e.account, "POST", "/api/apps/site/previews/b/promote", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("promote: %d %v", status, promoted)
	}
	if status, _, _ := e.request(e.account, "DELETE", "/api/apps/site/previews/b", "", nil, 0); status != http.StatusNoContent {
		t.Fatal("delete b")
	}
	filesBefore := len(e.files())
	if n, err := e.svc.PrunePreviewRevisions(ctx); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want a1 and b's", n, err)
	}
	var left []string
	rows, _ := e.pool.Query(ctx, `SELECT id::text FROM deploys WHERE preview_id IS NOT NULL`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		left = append(left, id)
	}
	rows.Close()
	if len(left) != 1 || left[0] != a2 {
		t.Fatalf("preview revisions left %v, want a2 %s", left, a2)
	}
	old := time.Now().Add(-time.Hour)
	for _, f := range e.files() {
		os.Chtimes(f, old, old)
	}
	e.clock.Set(time.Now())
	if swept, err := e.svc.SweepArtifacts(ctx, 10*time.Minute); err != nil || swept != 1 || len(e.files()) != filesBefore-1 {
		t.Fatalf("swept %d (%v), files %d → %d: a1's artifact goes, b's stays with its promote", swept, err, filesBefore, len(e.files()))
	}
	if _, hosted, _ := e.svc.Hosting(ctx, "local", promoted["appId"].(string), promoted["id"].(string)); !hosted {
		t.Fatal("the promote lost its deploy")
	}
}
