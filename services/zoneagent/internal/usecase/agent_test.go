package usecase_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sites"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

type zone struct {
	t      *testing.T
	pool   *pgxpool.Pool
	st     *store.Store
	agent  *usecase.Agent
	edge   *httptest.Server
	objDir string
	sites  *sites.Store // the zone's bucket on the real S3 server
	stop   func()       // stops the agent, as a crash would
}

// runAgent runs an agent's parts as cmd/zoneagent does, until the returned stop is called.
func runAgent(t *testing.T, a *usecase.Agent) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	g, _ := lifecycle.New(ctx)
	g.Go("agent", a.Run)
	g.Every(nil, a.PollJob())
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newZone(t *testing.T) *zone {
	t.Helper()
	pool := storetest.NewPool(t)
	data := t.TempDir()
	z := &zone{t: t, pool: pool, st: store.New(pool), objDir: filepath.Join(data, "objects"), sites: zoneSites(t)}
	table := edge.NewTable()
	a, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: z.st, Artifacts: artifactsFrom(t, z.st, z.objDir), Sites: z.sites, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	z.agent = a
	z.edge = httptest.NewServer(&edge.Edge{Domain: "apps.test", PreviewsDomain: "preview.apps.test", Sites: z.cache(), Table: table})
	t.Cleanup(z.edge.Close)
	z.stop = runAgent(t, a)
	return z
}

// zoneSites is the zone's site store: a bucket of its own on a real S3 server, reached with
// the zone's own credentials, as bin/bootstrap makes them.
func zoneSites(t *testing.T) *sites.Store {
	t.Helper()
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, storetest.Zone)
	bucket, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: env["ZONEAGENT_OBJECT_STORE_BUCKET"]})
	if err != nil {
		t.Fatal(err)
	}
	return &sites.Store{Bucket: bucket}
}

// cache is a new, empty edge cache in front of the zone's sites.
func (z *zone) cache() *sites.Cache {
	z.t.Helper()
	c, err := sites.NewCache(*z.sites, z.t.TempDir(), 16<<20)
	if err != nil {
		z.t.Fatal(err)
	}
	return c
}

// objects counts the objects in the zone's bucket under prefix.
func (z *zone) objects(prefix string) int {
	z.t.Helper()
	n := 0
	if err := z.sites.Bucket.List(context.Background(), prefix, func(objectstore.Info) bool { n++; return true }); err != nil {
		z.t.Fatal(err)
	}
	return n
}

// putSite writes a static artifact (a plain tar, as the deploys service makes) and returns
// its key.
func (z *zone) putSite(appID string, files map[string]string) string {
	z.t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	return z.putArtifact(appID, buf.Bytes())
}

// putArtifact writes an artifact of the given bytes and returns its key.
func (z *zone) putArtifact(appID string, archive []byte) string {
	z.t.Helper()
	key := "artifacts/" + appID + "/" + uuid.NewString() + ".tar"
	p := filepath.Join(z.objDir, filepath.FromSlash(key))
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, archive, 0o600); err != nil {
		z.t.Fatal(err)
	}
	return key
}

// command records a command as the bus consumer does and wakes the worker.
func (z *zone) command(fn func(ctx context.Context, tx usecase.Tx) error) {
	z.t.Helper()
	ctx := context.Background()
	if err := z.st.InTx(ctx, func(tx usecase.Tx) error { return fn(ctx, tx) }); err != nil {
		z.t.Fatal(err)
	}
	z.agent.Poke()
}

func (z *zone) start(appID, slug, key string) string {
	id := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		_, err := tx.AddRevision(ctx, revision.Revision{DeployID: id, AppID: appID, Slug: slug, Kind: revision.KindStatic, ArtifactKey: key})
		return err
	})
	return id
}

func (z *zone) waitState(deployID string, want revision.State) {
	z.t.Helper()
	testinfra.Eventually(z.t, 10*time.Second, "revision "+deployID+" "+string(want), func() bool {
		r, err := z.st.Revision(context.Background(), deployID)
		return err == nil && r.State == want
	})
}

// waitServes awaits the edge serving body at host: the table follows a switch right after
// the switch commits, so the state flips a moment before traffic moves.
func (z *zone) waitServes(host, body string) {
	z.t.Helper()
	testinfra.Eventually(z.t, 10*time.Second, host+" serving "+body, func() bool {
		status, got := z.get(host, "/")
		return status == 200 && got == body
	})
}

func (z *zone) get(host, path string) (int, string) {
	z.t.Helper()
	req, _ := http.NewRequest("GET", z.edge.URL+path, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		z.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// progress is the report of step for a deploy (the test fails without one).
func (z *zone) progress(deployID string, step zonev1.DeployStep) *zonev1.DeployProgress {
	z.t.Helper()
	rows, err := z.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyDeployProgressed)
	if err != nil {
		z.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			z.t.Fatal(err)
		}
		var p zonev1.DeployProgress
		if err := proto.Unmarshal(b, &p); err != nil {
			z.t.Fatal(err)
		}
		if p.GetDeployId() == deployID && p.GetStep() == step {
			return &p
		}
	}
	z.t.Fatalf("deploy %s reported no %v", deployID, step)
	return nil
}

// steps lists the steps the zone reported for a deploy, in order.
func (z *zone) steps(deployID string) []zonev1.DeployStep {
	z.t.Helper()
	rows, err := z.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyDeployProgressed)
	if err != nil {
		z.t.Fatal(err)
	}
	defer rows.Close()
	var out []zonev1.DeployStep
	for rows.Next() {
		var b []byte
		rows.Scan(&b)
		var p zonev1.DeployProgress
		if err := proto.Unmarshal(b, &p); err != nil {
			z.t.Fatal(err)
		}
		if p.GetDeployId() == deployID {
			out = append(out, p.GetStep())
		}
	}
	return out
}

func TestStaticSiteServedThroughTheEdge(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	d1 := z.start(appID, "blog", z.putSite(appID, map[string]string{"index.html": "v1", "docs/index.html": "docs", "a/b.txt": "b"}))
	z.waitState(d1, revision.StateReady)
	// Ready is not live: nothing is served until the control plane says so.
	if status, _ := z.get("blog.apps.test", "/"); status != 404 {
		t.Fatalf("served before activation: %d", status)
	}
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, d1, true) })
	z.waitState(d1, revision.StateActive)
	z.waitServes("blog.apps.test", "v1")
	for path, want := range map[string]string{"/": "v1", "/index.html": "v1", "/docs/": "docs", "/docs": "docs", "/a/b.txt": "b"} {
		if status, body := z.get("blog.apps.test", path); status != 200 || body != want {
			t.Errorf("GET %s: %d %q, want %q", path, status, body, want)
		}
	}
	for _, tc := range []struct{ host, path string }{
		{"blog.apps.test", "/missing"},
		{"blog.apps.test", "/../../etc/passwd"},
		{"other.apps.test", "/"},
		{"blog.example.com", "/"},
		{"apps.test", "/"},
	} {
		if status, body := z.get(tc.host, tc.path); status != 404 || body != "not found\n" {
			t.Errorf("%s%s: %d %q", tc.host, tc.path, status, body)
		}
	}

	// A newer revision switches the site; the old folder goes.
	d2 := z.start(appID, "blog", z.putSite(appID, map[string]string{"index.html": "v2"}))
	z.waitState(d2, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, d2, true) })
	z.waitState(d2, revision.StateActive)
	if _, body := z.get("blog.apps.test:80", "/"); body != "v2" {
		t.Fatalf("after switch: %q", body)
	}
	// The retired revision's objects go after the switch commits (cleanup never holds a
	// switch back), so they are awaited, not checked the moment the state flips.
	if n := z.objects("sites/" + appID + "/" + d2 + "/"); n != 2 {
		t.Fatalf("the live revision has %d objects, want its file and its manifest", n)
	}
	testinfra.Eventually(t, 10*time.Second, "the retired revision's objects to go", func() bool {
		return z.objects("sites/"+appID+"/"+d1+"/") == 0
	})
	want := []zonev1.DeployStep{usecase.StepBuildStarted, usecase.StepReady, usecase.StepActivated}
	if got := z.steps(d1); !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}

	// Deleting the app stops serving at once.
	if err := z.agent.ForgetApp(context.Background(), appID); err != nil {
		t.Fatal(err)
	}
	if status, _ := z.get("blog.apps.test", "/"); status != 404 {
		t.Fatalf("deleted app still served: %d", status)
	}
	// And its objects are reclaimed.
	if n := z.objects("sites/" + appID + "/"); n != 0 {
		t.Fatalf("a deleted app keeps %d site objects", n)
	}
}

// An older revision never replaces a newer one, and a discarded one never goes live.
func TestOlderAndDiscardedRevisionsNeverServe(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	older := z.start(appID, "site", z.putSite(appID, map[string]string{"index.html": "old"}))
	newer := z.start(appID, "site", z.putSite(appID, map[string]string{"index.html": "new"}))
	z.waitState(newer, revision.StateReady)
	z.waitState(older, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, newer, true) })
	z.waitState(newer, revision.StateActive)
	z.waitServes("site.apps.test", "new")
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, older, true) })
	z.waitState(older, revision.StateDiscarded)
	if _, body := z.get("site.apps.test", "/"); body != "new" {
		t.Fatalf("serving %q", body)
	}
	third := z.start(appID, "site", z.putSite(appID, map[string]string{"index.html": "third"}))
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, third, false) })
	z.waitState(third, revision.StateDiscarded)
	if _, body := z.get("site.apps.test", "/"); body != "new" {
		t.Fatalf("serving %q after a discard", body)
	}
}

func TestUnsafeStaticArtifactFails(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	d := z.start(appID, "bad", z.putSite(appID, map[string]string{"../escape.html": "x"}))
	z.waitState(d, revision.StateFailed)
	if n := z.objects("sites/"); n != 0 {
		t.Fatalf("a failed revision left %d site objects", n)
	}
	if got := z.steps(d); !slices.Contains(got, usecase.StepFailed) {
		t.Fatalf("reported %v", got)
	}
}

// A static artifact is published straight from its stream, under the unpacker's rules: one
// holding a link fails as invalid_artifact (as when it was unpacked first), even after files
// already went into the bundle, and leaves nothing in the store.
func TestStaticArtifactWithALinkFails(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "index.html", Mode: 0o644, Size: 4, Typeflag: tar.TypeReg})
	tw.Write([]byte("home"))
	tw.WriteHeader(&tar.Header{Name: "leak.txt", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	tw.Close()
	d := z.start(appID, "linked", z.putArtifact(appID, buf.Bytes()))
	z.waitState(d, revision.StateFailed)
	if n := z.objects("sites/"); n != 0 {
		t.Fatalf("a refused site left %d objects", n)
	}
	failed := z.progress(d, usecase.StepFailed)
	if failed.GetError() != revision.CodeInvalidArtifact || !strings.Contains(failed.GetMessage(), "a site holds no links") {
		t.Fatalf("failed as %q: %q", failed.GetError(), failed.GetMessage())
	}
}

// A revision an earlier run left half-prepared is prepared again after a restart, and the
// live site is served again from the record and the store, through an edge cache that starts
// empty.
func TestRestartResumesAndRestores(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	live := z.start(appID, "keep", z.putSite(appID, map[string]string{"index.html": "kept"}))
	z.waitState(live, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, live, true) })
	z.waitState(live, revision.StateActive)

	// A second agent on the same records, as after a crash: its table starts empty.
	z.stop()
	pending := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: pending, AppID: appID, Slug: "keep", Kind: revision.KindStatic, ArtifactKey: z.putSite(appID, map[string]string{"index.html": "next"})}); err != nil {
			return err
		}
		return tx.SetState(ctx, pending, revision.StatePending, revision.StatePreparing)
	})
	table := edge.NewTable()
	again, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: z.st, Artifacts: artifactsFrom(t, z.st, z.objDir), Sites: z.sites, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, again)
	z.waitState(pending, revision.StateReady)
	srv := httptest.NewServer(&edge.Edge{Domain: "apps.test", Sites: z.cache(), Table: table})
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "keep.apps.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "kept" {
		t.Fatalf("after restart: %d %q", resp.StatusCode, body)
	}
}

// The control plane says live on the activated report, so that report must not be visible
// (committed to the outbox) before the edge serves the revision: a first deploy must not be
// a 404, and a later one must not still serve the previous site. Each round watches the
// outbox and reads the edge the moment the report appears.
func TestActivatedIsReportedOnlyOnceTheEdgeServes(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	for round := range 10 {
		want := "v" + string(rune('0'+round))
		d := z.start(appID, "race", z.putSite(appID, map[string]string{"index.html": want}))
		z.waitState(d, revision.StateReady)
		z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, d, true) })
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Contains(z.steps(d), usecase.StepActivated) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no activated report", round)
			}
		}
		if status, body := z.get("race.apps.test", "/"); status != 200 || body != want {
			t.Fatalf("round %d: reported activated while the edge answers %d %q, want %q", round, status, body, want)
		}
	}
}
