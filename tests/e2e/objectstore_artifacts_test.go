package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
	"tori.dev/tests/e2e/harness"
)

// A static and a source deploy go live with their artifacts in the real S3 server only: each
// is an object of deploys' bucket under artifacts/<app id>/<deploy id>, no folder holds one
// (deploys writes none under the DATA_DIR it shares with the zone here, so the zone had none
// there to read: it fetched each by a URL deploys handed it), and the zone's own credentials, tried against the real
// server, reach none of them. Deleting the app reclaims its artifacts, counted on /metrics.
func TestDeploysGoLiveFromTheObjectStore(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "DEPLOYS_SWEEP_EVERY": "1s"}})
	a := s.NewAccount(t, "store")

	site := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, site, sitePart{"index.html", "served from the store"})
	if r.Status != http.StatusCreated {
		t.Fatalf("static deploy: %d %s", r.Status, r.Body)
	}
	static := r.Map(t)
	waitStatus(t, s, a.Token, site, static["id"].(string), "live")
	waitEdge(t, s, site, "/", "served from the store")

	svc := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r = deploySource(t, s, a.Token, svc, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"s3"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("source deploy: %d %s", r.Status, r.Body)
	}
	source := r.Map(t)
	waitStatus(t, s, a.Token, svc, source["id"].(string), "live")
	waitEdge(t, s, svc, "/", "none unreleased s3")

	ctx := context.Background()
	deploys := bucketAs(t, s, "deploys", "DEPLOYS", harness.ArtifactsBucket)
	keyOf := func(d map[string]any) string {
		t.Helper()
		prefix := "artifacts/" + d["appId"].(string) + "/" + d["id"].(string) + "."
		var found []string
		if err := deploys.List(ctx, prefix, func(i objectstore.Info) bool { found = append(found, i.Key); return true }); err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		if len(found) != 1 {
			t.Fatalf("artifacts of deploy %s in the bucket: %v, want one under %s", d["id"], found, prefix)
		}
		return found[0]
	}
	siteKey, sourceKey := keyOf(static), keyOf(source)

	// Nothing of an artifact rests in a folder: no file under DATA_DIR (which deploys and the
	// zone share here) is named as an artifact is, <deploy id>.tar[.gz].
	filepath.WalkDir(s.DataDir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			for _, d := range []map[string]any{static, source} {
				if strings.HasPrefix(e.Name(), d["id"].(string)+".") {
					t.Errorf("an artifact in a folder: %s", p)
				}
			}
		}
		return nil
	})

	// The zone's own credentials on the real server: no read, head, list, presigned read,
	// write or delete in the artifacts bucket.
	zone := bucketAs(t, s, "zoneagent", "ZONEAGENT", harness.ArtifactsBucket)
	for _, key := range []string{siteKey, sourceKey} {
		if rc, _, err := zone.Get(ctx, key, nil); !errors.Is(err, objectstore.ErrAccessDenied) {
			if err == nil {
				rc.Close()
			}
			t.Errorf("the zone reads %s: %v", key, err)
		}
		if _, err := zone.Head(ctx, key); err == nil {
			t.Errorf("the zone heads %s", key)
		}
		u, err := zone.PresignGet(ctx, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a URL the zone signs for %s: %d, want 403", key, resp.StatusCode)
		}
		if err := zone.Delete(ctx, key); !errors.Is(err, objectstore.ErrAccessDenied) {
			t.Errorf("the zone deletes %s: %v", key, err)
		}
	}
	if err := zone.List(ctx, "", func(objectstore.Info) bool { return true }); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Errorf("the zone lists the artifacts bucket: %v", err)
	}
	if _, err := zone.Put(ctx, "artifacts/planted", strings.NewReader("x"), 1, ""); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Errorf("the zone writes the artifacts bucket: %v", err)
	}

	// Deleting the static app reclaims its artifact, and only its.
	before := scrape(t, s.Env["DEPLOYS_ADDR"])["tori_deploys_artifacts_deleted_total"]
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + site, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 30*time.Second, "the deleted app's artifact to go", func() bool {
		_, err := deploys.Head(ctx, siteKey)
		return errors.Is(err, objectstore.ErrNotFound)
	})
	if _, err := deploys.Head(ctx, sourceKey); err != nil {
		t.Fatalf("another app's artifact went too: %v", err)
	}
	if after := scrape(t, s.Env["DEPLOYS_ADDR"])["tori_deploys_artifacts_deleted_total"]; after < before+1 {
		t.Errorf("tori_deploys_artifacts_deleted_total %v → %v, want it counted", before, after)
	}
	var left []string
	deploys.List(ctx, "artifacts/", func(i objectstore.Info) bool { left = append(left, i.Key); return true })
	if !slices.Equal(left, []string{sourceKey}) {
		t.Errorf("the bucket holds %v, want only %s", left, sourceKey)
	}
}

// bucketAs is bucket seen through the object-store credentials the stack gave service name
// (as bin/bootstrap writes them, <PREFIX>_OBJECT_STORE_*).
func bucketAs(t *testing.T, s *harness.Stack, name, prefix, bucket string) *objectstore.Store {
	t.Helper()
	c := s.Credentials(name)
	st, err := objectstore.New(objectstore.Config{URL: c["OBJECT_STORE_URL"], AccessKey: c[prefix+"_OBJECT_STORE_ACCESS_KEY"], SecretKey: c[prefix+"_OBJECT_STORE_SECRET_KEY"], Bucket: bucket})
	if err != nil {
		t.Fatalf("%s's object store: %v", name, err)
	}
	return st
}
