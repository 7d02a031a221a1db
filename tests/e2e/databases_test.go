package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// The managed database's routes through the gateway: one per service app, created
// provisioning, its owner's alone, and 404 wherever there is no app of the caller's or no
// database.
func TestDatabaseRoutesThroughTheGateway(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "db")
	other := s.NewAccount(t, "db-other")
	svc := createApp(t, s, a.Token, "service")
	static := createApp(t, s, a.Token, "static")
	bare := createApp(t, s, a.Token, "service")
	path := func(slug string) string { return "/api/apps/" + slug + "/database" }

	r := post(s, t, path(svc), a.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.Map(t)
	expectKeys(t, "database", created, "id", "appId", "createdAt", "message", "status")
	if created["status"] != "provisioning" || created["message"] != nil {
		t.Fatalf("create: %s", r.Body)
	}
	app := s.Get(t, "/api/apps/"+svc, a.Token).Map(t)
	if created["appId"] != app["id"] {
		t.Fatalf("appId %v, app %v", created["appId"], app["id"])
	}
	// The zone makes it on its own cluster and says so.
	harness.Eventually(t, 30*time.Second, "the database ready", func() bool {
		got := s.Get(t, path(svc), a.Token)
		if got.Status != http.StatusOK || got.Map(t)["id"] != created["id"] {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		st := got.Map(t)["status"]
		if st != "provisioning" && st != "ready" {
			t.Fatalf("status %v: %s", st, got.Body)
		}
		return st == "ready"
	})
	// Then the apps service writes DATABASE_URL, masked like every value.
	harness.Eventually(t, 30*time.Second, "DATABASE_URL in the app's environment", func() bool {
		v, ok := envValue(t, s, a.Token, svc, "DATABASE_URL")
		if ok && v != "pos********" {
			t.Fatalf("DATABASE_URL shown as %q", v)
		}
		return ok
	})

	expectError(t, post(s, t, path(svc), a.Token, nil), http.StatusConflict, "database_exists")
	expectError(t, post(s, t, path(static), a.Token, nil), http.StatusBadRequest, "service_only")
	for _, tc := range []struct {
		name, method, slug, token string
	}{
		{"unknown app", http.MethodGet, "no-such-app", a.Token},
		{"unknown app, create", http.MethodPost, "no-such-app", a.Token},
		{"another account's app", http.MethodGet, svc, other.Token},
		{"another account's app, create", http.MethodPost, svc, other.Token},
		{"another account's app, delete", http.MethodDelete, svc, other.Token},
		{"an app without one", http.MethodGet, bare, a.Token},
		{"an app without one, delete", http.MethodDelete, bare, a.Token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectError(t, s.Do(t, harness.Request{Method: tc.method, Path: path(tc.slug), Token: tc.token}), http.StatusNotFound, "not found")
		})
	}

	del := s.Do(t, harness.Request{Method: http.MethodDelete, Path: path(svc), Token: a.Token})
	if del.Status != http.StatusAccepted || del.Map(t)["status"] != "deleting" {
		t.Fatalf("delete: %d %s", del.Status, del.Body)
	}
	// The record goes once the zone confirms the database gone; then a new one may be made.
	harness.Eventually(t, 30*time.Second, "the database gone", func() bool {
		return s.Get(t, path(svc), a.Token).Status == http.StatusNotFound
	})
	harness.Eventually(t, 30*time.Second, "DATABASE_URL gone with it", func() bool {
		_, ok := envValue(t, s, a.Token, svc, "DATABASE_URL")
		return !ok
	})
	again := post(s, t, path(svc), a.Token, nil)
	if again.Status != http.StatusAccepted {
		t.Fatalf("create after the delete: %d %s", again.Status, again.Body)
	}
	name := "db_" + strings.ReplaceAll(again.Map(t)["id"].(string), "-", "")
	harness.Eventually(t, 30*time.Second, "the second database on the zone's cluster", func() bool { return zoneHasDatabase(t, name) })

	// A deleted app's database is 404 at once, and the zone drops it.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + svc, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete app: %d %s", r.Status, r.Body)
	}
	expectError(t, s.Get(t, path(svc), a.Token), http.StatusNotFound, "not found")
	harness.Eventually(t, 30*time.Second, "the deleted app's database dropped", func() bool { return !zoneHasDatabase(t, name) })
}

// zoneHasDatabase reports whether the zone's managed-database cluster holds database name.
func zoneHasDatabase(t *testing.T, name string) bool {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// envValue is the masked value of the app's variable key, if it is set.
func envValue(t *testing.T, s *harness.Stack, token, slug, key string) (string, bool) {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/env", token)
	if r.Status != http.StatusOK {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	var vars []map[string]any
	r.JSON(t, &vars)
	for _, v := range vars {
		if v["key"] == key {
			return v["value"].(string), true
		}
	}
	return "", false
}

// dbAppPy is a source app that uses its database through $DATABASE_URL with the host's psql
// binary (no driver needed), and reports what happened.
const dbAppPy = `
import glob, json, os, subprocess
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit, urlunsplit, parse_qs, urlparse
PSQL = (sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")) + ["psql"])[0]
URL = os.environ.get("DATABASE_URL", "")
def psql(url, sql):
    p = subprocess.run([PSQL, "-X", "-q", "-tA", url, "-c", sql], capture_output=True, text=True, timeout=30)
    return {"rc": p.returncode, "out": p.stdout.strip(), "err": p.stderr.strip()[-300:]}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        if u.path == "/write":
            r = psql(URL, "CREATE TABLE IF NOT EXISTS notes (body text); INSERT INTO notes VALUES ('written in the sandbox'); SELECT count(*) FROM notes")
        elif u.path == "/fill":
            r = psql(URL, "CREATE TABLE big (id int, body text); INSERT INTO big SELECT g, md5(g::text) || md5((g+1)::text) FROM generate_series(1, 80000) g")
        elif u.path == "/recover":
            r = psql(URL, "BEGIN; SET TRANSACTION READ WRITE; TRUNCATE big; COMMIT")
        elif u.path == "/slow":
            r = psql(URL, "SELECT pg_sleep(10)")
        elif u.path == "/read":
            r = psql(URL, "SELECT body FROM notes")
        elif u.path == "/other":
            parts = urlsplit(URL)
            r = psql(urlunsplit((parts.scheme, parts.netloc, "/" + q["db"][0], parts.query, "")), "SELECT 1")
        elif u.path == "/control":
            r = psql("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable&connect_timeout=3", "SELECT 1")
        else:
            r = {"ok": True, "hasURL": URL != ""}
        b = json.dumps(r).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(b)
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// A source app in its sandbox reaches its own database with $DATABASE_URL through the zone's
// pooler, writes and reads, goes read-only over its cap and recovers, has a statement past the
// timeout cancelled, and reaches neither another app's database nor the control plane's
// cluster.
func TestSourceAppUsesItsDatabase(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000", "DATABASE_STATEMENT_TIMEOUT": "1s",
		// Measured five times a second against a cap of 12 MB (an empty database is 7.5 MB).
		"DATABASE_SIZE_CHECK_INTERVAL": "200ms", "ZONE_DATABASE_MAX_BYTES_OVERRIDE": "12000000",
		// A dump's download URL works this long (5 minutes by default), so the test sees one die.
		"ZONE_DUMP_URL_TTL": "2s",
	}})
	a := s.NewAccount(t, "db-app")
	ready := func(slug string) string {
		t.Helper()
		if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("create database: %d %s", r.Status, r.Body)
		}
		var id string
		harness.Eventually(t, 30*time.Second, "DATABASE_URL of "+slug, func() bool {
			r := s.Get(t, "/api/apps/"+slug+"/database", a.Token)
			id, _ = r.Map(t)["id"].(string)
			_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
			return ok
		})
		return id
	}
	slug := createApp(t, s, a.Token, "service")
	other := createApp(t, s, a.Token, "service")
	ready(slug)
	otherID := ready(other)

	// The variable is in the snapshot of a deploy made after it was written.
	m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": dbAppPy}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	if status, body := edgeGet(t, s, slug, "/"); status != http.StatusOK || !strings.Contains(body, `"hasURL": true`) {
		t.Fatalf("the app: %d %s", status, body)
	}

	probe := func(path string) map[string]any {
		t.Helper()
		status, body := edgeGet(t, s, slug, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("GET %s: %s", path, body)
		}
		t.Logf("%s: %s", path, body)
		return out
	}
	if w := probe("/write"); w["rc"] != float64(0) || w["out"] != "1" {
		t.Fatalf("write through the pooler: %v", w)
	}
	if rd := probe("/read"); rd["rc"] != float64(0) || rd["out"] != "written in the sandbox" {
		t.Fatalf("read through the pooler: %v", rd)
	}
	// DATABASE_STATEMENT_TIMEOUT (1 s here, 60 s by default) cancels a longer statement.
	if sl := probe("/slow"); sl["rc"] == float64(0) || !strings.Contains(sl["err"].(string), "statement timeout") {
		t.Fatalf("a statement past the timeout: %v", sl)
	}
	// Over the cap: read_only with the usage and the cap, writes refused, reads go on; the
	// recovery transaction through the pooler brings it under 90 % and writes resume.
	if f := probe("/fill"); f["rc"] != float64(0) {
		t.Fatalf("fill: %v", f)
	}
	status := func() map[string]any { return s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t) }
	harness.Eventually(t, 30*time.Second, "read_only", func() bool { return status()["status"] == "read_only" })
	if msg, _ := status()["message"].(string); !strings.Contains(msg, "MB") {
		t.Fatalf("read_only message %q", msg)
	}
	if w := probe("/write"); w["rc"] == float64(0) || !strings.Contains(w["err"].(string), "read-only") {
		t.Fatalf("a write over the cap: %v", w)
	}
	if rd := probe("/read"); rd["rc"] != float64(0) || rd["out"] != "written in the sandbox" {
		t.Fatalf("a read over the cap: %v", rd)
	}
	if rc := probe("/recover"); rc["rc"] != float64(0) {
		t.Fatalf("the recovery transaction: %v", rc)
	}
	harness.Eventually(t, 30*time.Second, "ready again", func() bool { return status()["status"] == "ready" })
	if st := status(); st["message"] != nil {
		t.Fatalf("ready again with a message: %v", st)
	}
	if w := probe("/write"); w["rc"] != float64(0) || w["out"] != "2" {
		t.Fatalf("a write under 90 %% of the cap: %v", w)
	}
	// A dump taken now: running, then succeeded; downloaded, pg_restore reads it back into a
	// database of the test's own with the same rows.
	if r := post(s, t, "/api/apps/"+slug+"/database/dumps", a.Token, nil); r.Status != http.StatusAccepted || r.Map(t)["status"] != "running" {
		t.Fatalf("take a dump: %d %s", r.Status, r.Body)
	}
	var dumps []map[string]any
	harness.Eventually(t, 60*time.Second, "the dump succeeded", func() bool {
		s.Get(t, "/api/apps/"+slug+"/database/dumps", a.Token).JSON(t, &dumps)
		if len(dumps) != 1 || dumps[0]["status"] == "failed" {
			t.Fatalf("dumps %v", dumps)
		}
		return dumps[0]["status"] == "succeeded"
	})
	for _, d := range dumps {
		expectKeys(t, "dump", d, "id", "createdAt", "sizeBytes", "status")
	}
	// Downloaded through a short-lived presigned URL of the zone's bucket the API redirects to.
	download := "/api/apps/" + slug + "/database/dumps/" + dumps[0]["id"].(string) + "/download"
	link, issued := dumpLink(t, s, download, a.Token), time.Now()
	code, body := getWithoutCredentials(t, link)
	if code != http.StatusOK || int64(len(body)) != int64(dumps[0]["sizeBytes"].(float64)) {
		t.Fatalf("download: %d, %d bytes of %v", code, len(body), dumps[0]["sizeBytes"])
	}
	if rows := restoredNotes(t, body); rows != 2 {
		t.Fatalf("the restored dump holds %d notes, want 2", rows)
	}
	expectError(t, s.Get(t, "/api/apps/"+slug+"/database/dumps/"+uuid.NewString()+"/download", a.Token), http.StatusNotFound, "not found")
	stranger := s.NewAccount(t, "db-stranger")
	expectError(t, s.Get(t, download, stranger.Token), http.StatusNotFound, "not found")
	// The dump is an object of the zone's own bucket, which another zone's credentials cannot
	// read; nothing of it is under DATA_DIR.
	databaseID := s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["id"].(string)
	key := "dumps/" + databaseID + "/" + dumps[0]["id"].(string) + ".dump"
	zoneBucket := rootBucket(t, s, "tori-zone-local")
	if info, err := zoneBucket.Head(context.Background(), key); err != nil || info.Size != int64(len(body)) {
		t.Fatalf("the dump in the zone's bucket: %+v (%v)", info, err)
	}
	if _, err := otherZoneOn(t, s, "tori-zone-local").Head(context.Background(), key); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Fatalf("another zone's credentials on the dump: %v", err)
	}
	if err := filepath.WalkDir(s.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".dump") {
			t.Errorf("a dump under DATA_DIR: %s", path)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Past its lifetime (ZONE_DUMP_URL_TTL) the URL reads nothing; the API hands out another.
	time.Sleep(time.Until(issued.Add(4 * time.Second)))
	if code, _ := getWithoutCredentials(t, link); code != http.StatusForbidden {
		t.Fatalf("an expired download URL: %d", code)
	}
	if code, _ := getWithoutCredentials(t, dumpLink(t, s, download, a.Token)); code != http.StatusOK {
		t.Fatalf("a new download URL: %d", code)
	}

	// The dump restored into a database of its own: the same rows there, DATABASE_RESTORE_URL
	// written; one restore at a time; deleting it takes the variable away.
	restores := "/api/apps/" + slug + "/database/restores"
	rs := post(s, t, restores, a.Token, map[string]string{"dumpId": dumps[0]["id"].(string)})
	if rs.Status != http.StatusAccepted || rs.Map(t)["status"] != "restoring" || rs.Map(t)["dumpId"] != dumps[0]["id"] {
		t.Fatalf("restore: %d %s", rs.Status, rs.Body)
	}
	restoreID := rs.Map(t)["id"].(string)
	expectError(t, post(s, t, restores, a.Token, map[string]string{"dumpId": dumps[0]["id"].(string)}), http.StatusConflict, "restore_exists")
	expectError(t, post(s, t, restores, a.Token, map[string]string{"dumpId": uuid.NewString()}), http.StatusBadRequest, "invalid_dump")
	harness.Eventually(t, 60*time.Second, "the restore ready with its variable", func() bool {
		var list []map[string]any
		s.Get(t, restores, a.Token).JSON(t, &list)
		if len(list) != 1 || list[0]["status"] == "failed" {
			t.Fatalf("restores %v", list)
		}
		_, ok := envValue(t, s, a.Token, slug, "DATABASE_RESTORE_URL")
		return list[0]["status"] == "ready" && ok
	})
	if n := zoneCount(t, "db_"+strings.ReplaceAll(restoreID, "-", ""), "SELECT count(*) FROM notes"); n != 2 {
		t.Fatalf("the restore holds %d notes, want 2", n)
	}
	if _, ok := envValue(t, s, a.Token, slug, "DATABASE_URL"); !ok {
		t.Fatal("DATABASE_URL went with the restore")
	}
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: restores + "/" + restoreID, Token: a.Token}); r.Status != http.StatusAccepted || r.Map(t)["status"] != "deleting" {
		t.Fatalf("delete the restore: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 60*time.Second, "the restore and its variable gone", func() bool {
		var list []map[string]any
		s.Get(t, restores, a.Token).JSON(t, &list)
		_, ok := envValue(t, s, a.Token, slug, "DATABASE_RESTORE_URL")
		return len(list) == 0 && !ok
	})
	otherDB := "db_" + strings.ReplaceAll(otherID, "-", "")
	if o := probe("/other?db=" + otherDB); o["rc"] == float64(0) {
		t.Fatalf("the app reached another app's database: %v", o)
	}
	if c := probe("/control"); c["rc"] == float64(0) {
		t.Fatalf("the app reached the control plane's cluster: %v", c)
	}

	// Deleting the app takes its database and a restore of it off the zone's cluster.
	again := post(s, t, restores, a.Token, map[string]string{"dumpId": dumps[0]["id"].(string)})
	if again.Status != http.StatusAccepted {
		t.Fatalf("second restore: %d %s", again.Status, again.Body)
	}
	restoreDB := "db_" + strings.ReplaceAll(again.Map(t)["id"].(string), "-", "")
	harness.Eventually(t, 60*time.Second, "the second restore made", func() bool { return zoneHasDatabase(t, restoreDB) })
	liveDB := "db_" + strings.ReplaceAll(s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["id"].(string), "-", "")
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete app: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 60*time.Second, "the app's databases dropped", func() bool {
		return !zoneHasDatabase(t, restoreDB) && !zoneHasDatabase(t, liveDB)
	})
	// And its dumps out of the zone's bucket.
	harness.Eventually(t, 30*time.Second, "the app's dumps deleted", func() bool {
		n := 0
		if err := zoneBucket.List(context.Background(), "dumps/"+databaseID+"/", func(objectstore.Info) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

// BenchmarkDatabaseReady times POST /api/apps/{slug}/database to the record's ready (target
// under 2 s) and to DATABASE_URL in the app's environment, on one app whose database is
// deleted again between rounds (make bench-databases).
func BenchmarkDatabaseReady(b *testing.B) {
	s := harness.Start(b, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
	a := s.NewAccount(b, "bench-db")
	slug := createApp(b, s, a.Token, "service")
	path := "/api/apps/" + slug + "/database"
	var toReady, toURL time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if r := s.Do(b, harness.Request{Method: http.MethodPost, Path: path, Token: a.Token}); r.Status != http.StatusAccepted {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		harness.Eventually(b, time.Minute, "ready", func() bool { return s.Get(b, path, a.Token).Map(b)["status"] == "ready" })
		toReady += time.Since(start)
		harness.Eventually(b, time.Minute, "DATABASE_URL", func() bool {
			var vars []map[string]any
			s.Get(b, "/api/apps/"+slug+"/env", a.Token).JSON(b, &vars)
			return len(vars) == 1 && vars[0]["key"] == "DATABASE_URL"
		})
		toURL += time.Since(start)
		b.StopTimer()
		if r := s.Do(b, harness.Request{Method: http.MethodDelete, Path: path, Token: a.Token}); r.Status != http.StatusAccepted {
			b.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		harness.Eventually(b, time.Minute, "gone", func() bool { return s.Get(b, path, a.Token).Status == http.StatusNotFound })
		harness.Eventually(b, time.Minute, "DATABASE_URL gone", func() bool {
			var vars []map[string]any
			s.Get(b, "/api/apps/"+slug+"/env", a.Token).JSON(b, &vars)
			return len(vars) == 0
		})
		b.StartTimer()
	}
	b.ReportMetric(toReady.Seconds()/float64(b.N), "s-to-ready")
	b.ReportMetric(toURL.Seconds()/float64(b.N), "s-to-DATABASE_URL")
}

// restoredNotes restores a downloaded dump with pg_restore into a fresh database on the test
// server and counts its notes.
func restoredNotes(t *testing.T, dump []byte) int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "app.dump")
	if err := os.WriteFile(file, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	target := testinfra.NewDatabase(t, "restore", func(context.Context, string) error { return nil })
	if out, err := exec.Command("pg_restore", "--no-owner", "--no-privileges", "--dbname", target, file).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM notes").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// zoneCount runs a count query in database name of the zone's cluster, as its superuser.
func zoneCount(t *testing.T, name, query string) int {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = name
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
