package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sites"
)

// testSites is a zone's site store on the real S3 server and an edge cache in front of it.
type testSites struct {
	store sites.Store
	cache *sites.Cache
}

func newTestSites(t *testing.T) *testSites {
	t.Helper()
	srv := testinfra.StartObjectStore(t)
	env := srv.ZoneObjectStoreEnv(t, "edge-test")
	bucket, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: env["ZONEAGENT_OBJECT_STORE_BUCKET"]})
	if err != nil {
		t.Fatal(err)
	}
	store := sites.Store{Bucket: bucket}
	cache, err := sites.NewCache(store, t.TempDir(), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return &testSites{store: store, cache: cache}
}

// publish writes files (path → content) as a folder and publishes it as the revision, as the
// zone does when a static deploy is prepared.
func (s *testSites) publish(t *testing.T, appID, deployID string, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.store.Publish(context.Background(), appID, deployID, dir); err != nil {
		t.Fatal(err)
	}
}

// With the store out of reach and the file not cached, a visitor is told to retry (503), not
// that the site has no such page.
func TestStoreOutOfReachIsUnavailable(t *testing.T) {
	bucket, err := objectstore.New(objectstore.Config{URL: "http://" + testinfra.FreeAddr(t), AccessKey: "tori-zone-x", SecretKey: "nothing-listens-here", Bucket: "tori-zone-x"})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := sites.NewCache(sites.Store{Bucket: bucket}, t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic}}, nil)
	e := &Edge{Domain: "apps.test", Sites: cache, Table: table}
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "site.apps.test"
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("store out of reach: %d %q", w.Code, w.Body.String())
	}
}
