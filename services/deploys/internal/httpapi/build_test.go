package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// reportBuild applies the zone's build report as the bus consumer would.
func (e *env) reportBuild(deployID string, b *zonev1.BuildPlan) {
	e.t.Helper()
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnProgress(context.Background(), tx, &zonev1.DeployProgress{DeployId: deployID, Zone: "local",
			Step: zonev1.DeployStep_DEPLOY_STEP_BUILD_DETECTED, Message: "why", Build: b})
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) build(slug, id string) any {
	e.t.Helper()
	status, body, _ := e.request(e.account, http.MethodGet, "/api/apps/"+slug+"/deploys/"+id, "", nil, 0)
	if status != http.StatusOK {
		e.t.Fatalf("get deploy: %d %v", status, body)
	}
	b, ok := body["build"]
	if !ok {
		e.t.Fatalf("the deploy has no build member: %v", body)
	}
	return b
}

// A source deploy's build is null until the zone reports how it builds and starts it, then
// it is on the deploy, with command null when nothing is built; it stays
// on a deploy that failed after. Static and image deploys never get one.
func TestTheZonesBuildPlanIsOnTheDeploy(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	body := `{"scripts": {"start": "node server.js"}}`
	tw.WriteHeader(&tar.Header{Name: "package.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	src := e.uploadID("svc", part{`form-data; name="source"; filename="app.tar.gz"`, buf.String()})
	if b := e.build("svc", src); b != nil {
		t.Fatalf("before the zone said: %v", b)
	}
	e.reportBuild(src, &zonev1.BuildPlan{Detected: "node", Command: "npm ci", Start: "npm start"})
	b, _ := e.build("svc", src).(map[string]any)
	if b["detected"] != "node" || b["command"] != "npm ci" || b["start"] != "npm start" || len(b) != 3 {
		t.Fatalf("build %v", e.build("svc", src))
	}
	e.reportBuild(src, &zonev1.BuildPlan{Detected: "procfile", Start: "./serve"})
	e.report(src, zonev1.DeployStep_DEPLOY_STEP_FAILED, "build_failed")
	b, _ = e.build("svc", src).(map[string]any)
	if b["detected"] != "procfile" || b["command"] != nil || b["start"] != "./serve" {
		t.Fatalf("build after a plan with nothing to build, then a failure: %v", b)
	}
	e.addApp(e.account, "site", "static")
	id := e.deployStatic("site", "<p>hi</p>")
	e.reportBuild(id, &zonev1.BuildPlan{Detected: "node", Command: "npm ci", Start: "npm start"})
	if b := e.build("site", id); b != nil {
		t.Fatalf("a static deploy got a build: %v", b)
	}
}
