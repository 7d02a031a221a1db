package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"

	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// framework reads a deploy's recorded framework.
func (e *env) framework(deployID string) string {
	e.t.Helper()
	var fw string
	if err := e.pool.QueryRow(context.Background(), `SELECT framework FROM deploys WHERE id = $1`, deployID).Scan(&fw); err != nil {
		e.t.Fatal(err)
	}
	return fw
}

// liveEvent is the deploys.deploy.live message published for deployID.
func (e *env) liveEvent(deployID string) *deploysv1.DeployLive {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = 'deploys.deploy.live' ORDER BY seq`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			e.t.Fatal(err)
		}
		var m deploysv1.DeployLive
		if err := proto.Unmarshal(raw, &m); err != nil {
			e.t.Fatal(err)
		}
		if m.GetDeployId() == deployID {
			return &m
		}
	}
	e.t.Fatalf("no live event for %s", deployID)
	return nil
}

func (e *env) uploadID(slug string, parts ...part) string {
	e.t.Helper()
	status, body, _ := e.upload(e.account, slug, parts...)
	if status != http.StatusCreated {
		e.t.Fatalf("deploy: %d %v", status, body)
	}
	return body["id"].(string)
}

// Each upload's root package.json decides its deploy's framework, recorded on the deploy and
// carried by its live event; a broken one is ignored (static) without failing the deploy; a
// rollback carries its target's framework.
func TestStaticUploadsRecordTheirFramework(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	index := file("index.html", "hi")

	vite := e.uploadID("site", index, file("package.json", `{"devDependencies": {"vite": "^5.4.0"}}`))
	next := e.uploadID("site", index, file("package.json", `{"dependencies": {"next": "15.0.0", "vite": "^5"}}`))
	nested := e.uploadID("site", index, file("docs/package.json", `{"dependencies": {"astro": "^4"}}`))
	none := e.uploadID("site", index)
	broken := e.uploadID("site", index, file("package.json", `{"dependencies": {"vite": `))
	// Each goes live in turn (an older one after a newer would be cancelled): its live event
	// carries what its deploy recorded, and the broken package.json is served all the same.
	for _, d := range []struct{ id, want string }{{vite, "vite"}, {next, "next"}, {nested, "static"}, {none, "static"}, {broken, "static"}} {
		if got := e.framework(d.id); got != d.want {
			t.Errorf("deploy %s: framework %q, want %q", d.id, got, d.want)
		}
		e.goLive(d.id)
		if ev := e.liveEvent(d.id); e.status(d.id) != "live" || ev.GetFramework() != d.want {
			t.Fatalf("deploy %s is %s; live event %v, want framework %q", d.id, e.status(d.id), ev, d.want)
		}
	}

	// A rollback to the vite deploy is a vite deploy again.
	status, body, _ := e.request(e.account, "POST", "/api/apps/site/deploys/"+vite+"/rollback", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	back := body["id"].(string)
	if e.framework(back) != "vite" {
		t.Fatalf("rollback framework %q", e.framework(back))
	}
	e.goLive(back)
	if ev := e.liveEvent(back); ev.GetFramework() != "vite" {
		t.Fatalf("rollback's live event %v", ev)
	}
}

// A service's source tarball shows its framework the same way, which a plan redeploy keeps;
// an image shows none.
func TestSourceAndImageDeploysRecordTheirFramework(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{"tori.json": `{"start": "node server.js"}`, "./package.json": `{"dependencies": {"astro": "^4"}}`} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	src := e.uploadID("svc", part{`form-data; name="source"; filename="app.tar.gz"`, buf.String()})
	if got := e.framework(src); got != "astro" {
		t.Fatalf("source deploy: framework %q", got)
	}
	e.goLive(src)
	if ev := e.liveEvent(src); ev.GetFramework() != "astro" {
		t.Fatalf("live event %v", ev)
	}

	// A plan change's redeploy is the same artifact, so the same framework.
	ctx := context.Background()
	flock := testPlan
	flock.Name, flock.CPU, flock.Version = "flock", 2, 7
	if err := e.svc.Store().InTx(ctx, func(tx usecase.Tx) error { return e.svc.SavePlan(ctx, tx, e.account, flock) }); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.RedeployForPlans(ctx); n != 1 || err != nil {
		t.Fatalf("redeployed %d, %v", n, err)
	}
	var redeployed string
	if err := e.pool.QueryRow(ctx, `SELECT id::text FROM deploys WHERE status = 'building' AND app_id = (SELECT app_id FROM deploys WHERE id = $1)`, src).Scan(&redeployed); err != nil {
		t.Fatal(err)
	}
	if got := e.framework(redeployed); got != "astro" {
		t.Fatalf("plan redeploy: framework %q", got)
	}
	e.goLive(redeployed)

	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("image deploy: %d %v", status, body)
	}
	img := body["id"].(string)
	if got := e.framework(img); got != "static" {
		t.Fatalf("image deploy: framework %q", got)
	}
	e.goLive(img)
	if ev := e.liveEvent(img); ev.GetFramework() != "static" {
		t.Fatalf("image live event %v", ev)
	}
}
