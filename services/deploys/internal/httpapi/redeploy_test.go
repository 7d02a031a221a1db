package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// A plan change redeploys a running service: a new revision of the same image and snapshot,
// started with the new plan's CPU ceiling and minScale; static sites are left alone, and a
// revision already on the new plan is not redeployed again.
func TestPlanChangeRedeploysRunningServices(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	e.addApp(e.account, "site", "static")
	ctx := context.Background()
	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("deploy: %d %v", status, body)
	}
	live := body["id"].(string)
	e.goLive(live)
	e.goLive(e.deployStatic("site", "v1"))

	redeploy := func(want int64) {
		t.Helper()
		n, err := e.svc.RedeployForPlans(ctx)
		if err != nil || n != want {
			t.Fatalf("redeployed %d, %v; want %d", n, err, want)
		}
	}
	redeploy(0) // nothing changed

	flock := usecase.Plan{Name: "flock", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 45, MinScale: 1, CPU: 2, Version: 7}
	if err := e.svc.Store().InTx(ctx, func(tx usecase.Tx) error { return e.svc.SavePlan(ctx, tx, e.account, flock) }); err != nil {
		t.Fatal(err)
	}
	redeploy(1)
	redeploy(0) // under way: not twice

	var newID string
	var image, envFor, liveImage, liveEnvFor string
	e.pool.QueryRow(ctx, `SELECT id::text, image, env_for FROM deploys WHERE app_id = (SELECT app_id FROM deploys WHERE id = $1)
		AND status = 'building'`, live).Scan(&newID, &image, &envFor)
	e.pool.QueryRow(ctx, `SELECT image, env_for FROM deploys WHERE id = $1`, live).Scan(&liveImage, &liveEnvFor)
	if newID == "" || image != liveImage || envFor != liveEnvFor {
		t.Fatalf("redeploy %q image %q env %q; live image %q env %q", newID, image, envFor, liveImage, liveEnvFor)
	}
	var raw []byte
	if err := e.pool.QueryRow(ctx, `SELECT body FROM outbox WHERE routing_key LIKE 'zone.%.deploy' ORDER BY seq DESC LIMIT 1`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var start zonev1.StartRevision
	if err := proto.Unmarshal(raw, &start); err != nil {
		t.Fatal(err)
	}
	if start.GetDeployId() != newID || start.GetCpu() != 2 || start.GetMinScale() != 1 || start.GetBuildMinutes() != 45 {
		t.Fatalf("start revision %v", &start)
	}
	e.goLive(newID)
	if e.status(live) != "superseded" {
		t.Fatalf("old revision %s", e.status(live))
	}
	redeploy(0) // the new revision runs the new plan

	// A plan redeploy that fails is not tried again for that plan version (the live revision
	// keeps running; the failed deploy says why), but the next plan change tries again.
	songbird := flock
	songbird.Name, songbird.Version = "songbird", 8
	if err := e.svc.Store().InTx(ctx, func(tx usecase.Tx) error { return e.svc.SavePlan(ctx, tx, e.account, songbird) }); err != nil {
		t.Fatal(err)
	}
	redeploy(1)
	var failing string
	e.pool.QueryRow(ctx, `SELECT id::text FROM deploys WHERE app_id = (SELECT app_id FROM deploys WHERE id = $1)
		AND status = 'building'`, newID).Scan(&failing)
	e.report(failing, zonev1.DeployStep_DEPLOY_STEP_FAILED, "health_check_failed")
	if e.status(failing) != "failed" || e.status(newID) != "live" {
		t.Fatalf("failed redeploy %s, live revision %s", e.status(failing), e.status(newID))
	}
	redeploy(0)
	redeploy(0)
	songbird.Version = 9
	if err := e.svc.Store().InTx(ctx, func(tx usecase.Tx) error { return e.svc.SavePlan(ctx, tx, e.account, songbird) }); err != nil {
		t.Fatal(err)
	}
	redeploy(1)
}
