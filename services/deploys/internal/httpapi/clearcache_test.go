package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

// sourceTarball is a minimal service source: a manifest and nothing else.
func sourceTarball(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	body := `{"start": "node server.js"}`
	tw.WriteHeader(&tar.Header{Name: "tori.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	return buf.String()
}

// startCommand is the StartRevision the deploys service sent the zone for deployID.
func (e *env) startCommand(deployID string) *zonev1.StartRevision {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key LIKE 'zone.%.deploy' ORDER BY seq`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			e.t.Fatal(err)
		}
		var m zonev1.StartRevision
		if err := proto.Unmarshal(raw, &m); err != nil {
			e.t.Fatal(err)
		}
		if m.GetDeployId() == deployID {
			return &m
		}
	}
	e.t.Fatalf("no StartRevision for %s", deployID)
	return nil
}

// Issue 30: a source deploy's clearCache part reaches the zone in its StartRevision; a
// deploy without it, and a rollback to a deploy that had it, keep the app's build cache.
func TestClearCacheReachesTheZone(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	src := part{`form-data; name="source"; filename="app.tar.gz"`, sourceTarball(t)}

	cleared := e.uploadID("svc", src, part{`form-data; name="clearCache"`, "true"})
	if !e.startCommand(cleared).GetClearCache() {
		t.Fatal("clearCache true did not reach the zone")
	}
	e.goLive(cleared)
	kept := e.uploadID("svc", src)
	if e.startCommand(kept).GetClearCache() {
		t.Fatal("a deploy without clearCache asked the zone to clear the cache")
	}
	e.goLive(kept)
	explicit := e.uploadID("svc", src, part{`form-data; name="clearCache"`, "false"})
	if e.startCommand(explicit).GetClearCache() {
		t.Fatal("clearCache false asked the zone to clear the cache")
	}
	e.goLive(explicit)

	status, body, _ := e.request(e.account, "POST", "/api/apps/svc/deploys/"+cleared+"/rollback", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	if e.startCommand(body["id"].(string)).GetClearCache() {
		t.Fatal("a rollback cleared the cache again")
	}
}
