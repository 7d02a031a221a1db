package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// Whether a zone hosts a deploy, as the apps service asks before it opens a snapshot: only
// the app's own zone, only while the deploy is building, releasing or live, and with the
// snapshot that deploy uses (for a rollback, the deploy it rolled back to).
func TestHostingIsTheAppsZoneWhileTheDeployRuns(t *testing.T) {
	e := newEnv(t, testPlan)
	ctx := context.Background()
	appID := e.addApp(e.account, "svc", "service")
	otherApp := e.addApp(e.account, "other", "service")
	img := `{"image":"ghcr.io/acme/web@sha256:` + digest() + `","forceRestart":true}`
	deploy := func(slug string) string {
		t.Helper()
		status, body, _ := e.postJSON(e.account, "/api/apps/"+slug+"/deploys", img)
		if status != http.StatusCreated {
			t.Fatalf("deploy: %d %v", status, body)
		}
		return body["id"].(string)
	}
	first := deploy("svc")
	e.goLive(first)
	building := deploy("svc")
	failed := deploy("svc")
	e.report(failed, stepFailed, "release_failed")
	status, body, _ := e.request(e.account, "POST", "/api/apps/svc/deploys/"+first+"/rollback", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	rollback := body["id"].(string)
	foreign := deploy("other")

	cases := []struct {
		name, zone, app, deploy string
		hosted                  bool
		env                     string
	}{
		{"the live deploy in its zone", "local", appID, first, true, first},
		{"a building deploy", "local", appID, building, true, building},
		{"a rollback uses its original's snapshot", "local", appID, rollback, true, first},
		{"another zone", "eu-1", appID, first, false, ""},
		{"a failed deploy", "local", appID, failed, false, ""},
		{"another app's deploy under this app", "local", appID, foreign, false, ""},
		{"that deploy under its own app", "local", otherApp, foreign, true, foreign},
		{"an unknown deploy", "local", appID, uuid.NewString(), false, ""},
		{"an unknown app", "local", uuid.NewString(), first, false, ""},
	}
	for _, c := range cases {
		env, hosted, err := e.svc.Hosting(ctx, c.zone, c.app, c.deploy)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if hosted != c.hosted || env != c.env {
			t.Errorf("%s: hosted %v with %q, want %v with %q", c.name, hosted, env, c.hosted, c.env)
		}
	}
	// A superseded deploy is no longer hosted.
	e.goLive(building)
	if _, hosted, _ := e.svc.Hosting(ctx, "local", appID, first); hosted {
		t.Error("a superseded deploy is still hosted")
	}
}

// Any zone may publish progress, but only the app's own zone moves its deploys: a report from
// another zone changes nothing.
func TestOnlyTheAppsZoneReportsOnItsDeploys(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	id := e.deployStatic("site", "a")
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnProgress(context.Background(), tx, &zonev1.DeployProgress{DeployId: id, Zone: "eu-1", Step: stepFailed, Error: "build_failed"})
	})
	if err != nil || e.status(id) != "building" {
		t.Fatalf("a report from another zone: %v, status %s", err, e.status(id))
	}
	e.report(id, stepFailed, "build_failed")
	if e.status(id) != "failed" {
		t.Fatalf("the app's zone's report: status %s", e.status(id))
	}
}
