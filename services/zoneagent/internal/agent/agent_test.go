package agent_test

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
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"

	"tori.dev/services/zoneagent/internal/agent"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

type zone struct {
	t      *testing.T
	pool   *pgxpool.Pool
	st     *store.Store
	agent  *agent.Agent
	edge   *httptest.Server
	objDir string
	stop   func() // stops the agent, as a crash would
}

func newZone(t *testing.T) *zone {
	t.Helper()
	pool := storetest.NewPool(t)
	data := t.TempDir()
	z := &zone{t: t, pool: pool, st: store.New(pool), objDir: filepath.Join(data, "objects")}
	table := edge.NewTable()
	z.agent = &agent.Agent{Zone: storetest.Zone, Store: z.st, ObjectsDir: z.objDir, SitesDir: filepath.Join(data, "sites"), Table: table}
	z.agent.Init()
	z.edge = httptest.NewServer(&edge.Edge{Domain: "apps.test", SitesDir: z.agent.SitesDir, Table: table})
	t.Cleanup(z.edge.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { z.agent.Run(ctx); close(done) }()
	var once sync.Once
	z.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(z.stop)
	return z
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
	key := "artifacts/" + appID + "/" + uuid.NewString() + ".tar"
	p := filepath.Join(z.objDir, filepath.FromSlash(key))
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		z.t.Fatal(err)
	}
	return key
}

// command records a command as the bus consumer does and wakes the worker.
func (z *zone) command(fn func(ctx context.Context, tx store.Tx) error) {
	z.t.Helper()
	ctx := context.Background()
	if err := z.st.InTx(ctx, func(tx store.Tx) error { return fn(ctx, tx) }); err != nil {
		z.t.Fatal(err)
	}
	z.agent.Poke()
}

func (z *zone) start(appID, slug, key string) string {
	id := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx store.Tx) error {
		_, err := tx.AddRevision(ctx, store.Revision{DeployID: id, AppID: appID, Slug: slug, Kind: "static", ArtifactKey: key})
		return err
	})
	return id
}

func (z *zone) waitState(deployID, want string) {
	z.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := z.st.Revision(context.Background(), deployID)
		if err == nil && r.State == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r, _ := z.st.Revision(context.Background(), deployID)
	z.t.Fatalf("revision %s is %s, want %s", deployID, r.State, want)
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

// steps lists the steps the zone reported for a deploy, in order.
func (z *zone) steps(deployID string) []zonev1.DeployStep {
	z.t.Helper()
	rows, err := z.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = 'zone.deploy.progressed' ORDER BY seq`)
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
	app := uuid.NewString()
	d1 := z.start(app, "blog", z.putSite(app, map[string]string{"index.html": "v1", "docs/index.html": "docs", "a/b.txt": "b"}))
	z.waitState(d1, store.StateReady)
	// Ready is not live: nothing is served until the control plane says so.
	if status, _ := z.get("blog.apps.test", "/"); status != 404 {
		t.Fatalf("served before activation: %d", status)
	}
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, d1, true) })
	z.waitState(d1, store.StateActive)
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
	d2 := z.start(app, "blog", z.putSite(app, map[string]string{"index.html": "v2"}))
	z.waitState(d2, store.StateReady)
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, d2, true) })
	z.waitState(d2, store.StateActive)
	if _, body := z.get("blog.apps.test:80", "/"); body != "v2" {
		t.Fatalf("after switch: %q", body)
	}
	if _, err := os.Stat(filepath.Join(z.agent.SitesDir, app, d1)); !os.IsNotExist(err) {
		t.Fatal("the retired revision's folder is still there")
	}
	want := []zonev1.DeployStep{agent.StepBuildStarted, agent.StepReady, agent.StepActivated}
	if got := z.steps(d1); !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}

	// Deleting the app stops serving at once.
	if err := z.agent.ForgetApp(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if status, _ := z.get("blog.apps.test", "/"); status != 404 {
		t.Fatalf("deleted app still served: %d", status)
	}
}

// An older revision never replaces a newer one, and a discarded one never goes live.
func TestOlderAndDiscardedRevisionsNeverServe(t *testing.T) {
	z := newZone(t)
	app := uuid.NewString()
	older := z.start(app, "site", z.putSite(app, map[string]string{"index.html": "old"}))
	newer := z.start(app, "site", z.putSite(app, map[string]string{"index.html": "new"}))
	z.waitState(newer, store.StateReady)
	z.waitState(older, store.StateReady)
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, newer, true) })
	z.waitState(newer, store.StateActive)
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, older, true) })
	z.waitState(older, store.StateDiscarded)
	if _, body := z.get("site.apps.test", "/"); body != "new" {
		t.Fatalf("serving %q", body)
	}
	third := z.start(app, "site", z.putSite(app, map[string]string{"index.html": "third"}))
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, third, false) })
	z.waitState(third, store.StateDiscarded)
	if _, body := z.get("site.apps.test", "/"); body != "new" {
		t.Fatalf("serving %q after a discard", body)
	}
}

func TestUnsafeStaticArtifactFails(t *testing.T) {
	z := newZone(t)
	app := uuid.NewString()
	d := z.start(app, "bad", z.putSite(app, map[string]string{"../escape.html": "x"}))
	z.waitState(d, store.StateFailed)
	if _, err := os.Stat(filepath.Join(z.agent.SitesDir, "escape.html")); err == nil {
		t.Fatal("wrote outside the site")
	}
	if got := z.steps(d); !slices.Contains(got, agent.StepFailed) {
		t.Fatalf("reported %v", got)
	}
}

// A revision an earlier run left half-prepared is prepared again after a restart, and the
// live site is served again from the record and the files on disk.
func TestRestartResumesAndRestores(t *testing.T) {
	z := newZone(t)
	app := uuid.NewString()
	live := z.start(app, "keep", z.putSite(app, map[string]string{"index.html": "kept"}))
	z.waitState(live, store.StateReady)
	z.command(func(ctx context.Context, tx store.Tx) error { return tx.Want(ctx, live, true) })
	z.waitState(live, store.StateActive)

	// A second agent on the same records, as after a crash: its table starts empty.
	z.stop()
	pending := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.AddRevision(ctx, store.Revision{DeployID: pending, AppID: app, Slug: "keep", Kind: "static", ArtifactKey: z.putSite(app, map[string]string{"index.html": "next"})}); err != nil {
			return err
		}
		return tx.SetState(ctx, pending, store.StatePreparing)
	})
	table := edge.NewTable()
	again := &agent.Agent{Zone: storetest.Zone, Store: z.st, ObjectsDir: z.objDir, SitesDir: z.agent.SitesDir, Table: table}
	again.Init()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { again.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	z.waitState(pending, store.StateReady)
	srv := httptest.NewServer(&edge.Edge{Domain: "apps.test", SitesDir: again.SitesDir, Table: table})
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
