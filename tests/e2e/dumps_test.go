package e2e

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
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

// A database's dumps live in its zone's bucket: taken, listed, downloaded by the owner alone
// through a presigned URL the API redirects to (the very bytes pg_restore reads back), dead
// once its lifetime is over, unreadable with another zone's credentials, nothing under
// DATA_DIR; the eighth good dump prunes the first's object, and deleting the database or
// the app takes every object of theirs out of the bucket.
func TestDatabaseDumpsLiveInTheZonesBucket(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000",
		// A dump's download URL works this long (5 minutes by default), so the test sees one die.
		"ZONE_DUMP_URL_TTL": "2s",
	}})
	a := s.NewAccount(t, "dumps")
	zoneBucket := rootBucket(t, s, "tori-zone-local")
	ready := func(slug string) string {
		t.Helper()
		if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("create database: %d %s", r.Status, r.Body)
		}
		var id string
		harness.Eventually(t, 60*time.Second, "the database of "+slug+" ready", func() bool {
			m := s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)
			id, _ = m["id"].(string)
			return m["status"] == "ready"
		})
		// Two rows, written as the database's own role (what the app would write).
		zoneExec(t, "db_"+strings.ReplaceAll(id, "-", ""), "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('one'), ('two')")
		return id
	}
	dump := func(slug string) map[string]any {
		t.Helper()
		return takeDump(t, s, a.Token, slug)
	}
	objects := func(databaseID string) []string {
		t.Helper()
		var keys []string
		if err := zoneBucket.List(context.Background(), "dumps/"+databaseID+"/", func(o objectstore.Info) bool {
			keys = append(keys, o.Key)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}

	slug := createApp(t, s, a.Token, "service")
	databaseID := ready(slug)
	first := dump(slug)
	firstKey := "dumps/" + databaseID + "/" + first["id"].(string) + ".dump"

	// Downloaded through the presigned URL the API redirects to: the stored bytes.
	download := "/api/apps/" + slug + "/database/dumps/" + first["id"].(string) + "/download"
	link, issued := dumpLink(t, s, download, a.Token), time.Now()
	code, body := getWithoutCredentials(t, link)
	if code != http.StatusOK || int64(len(body)) != int64(first["sizeBytes"].(float64)) {
		t.Fatalf("download: %d, %d bytes of %v", code, len(body), first["sizeBytes"])
	}
	if rows := restoredNotes(t, body); rows != 2 {
		t.Fatalf("the downloaded dump restores %d notes, want 2", rows)
	}
	// Only the owner's account gets one.
	stranger := s.NewAccount(t, "dumps-stranger")
	expectError(t, s.Get(t, download, stranger.Token), http.StatusNotFound, "not found")
	expectError(t, s.Get(t, "/api/apps/"+slug+"/database/dumps/"+uuid.NewString()+"/download", a.Token), http.StatusNotFound, "not found")
	// The object is the zone's: another zone's credentials cannot read it.
	if info, err := zoneBucket.Head(context.Background(), firstKey); err != nil || info.Size != int64(len(body)) {
		t.Fatalf("the dump in the zone's bucket: %+v (%v)", info, err)
	}
	if _, _, err := otherZoneOn(t, s, "tori-zone-local").Get(context.Background(), firstKey, nil); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Fatalf("another zone's credentials on the dump: %v", err)
	}
	if err := filepath.WalkDir(s.DataDir, func(path string, _ fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".dump") {
			t.Errorf("a dump under DATA_DIR: %s", path)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Past its lifetime the URL reads nothing; the API hands out another.
	time.Sleep(time.Until(issued.Add(4 * time.Second)))
	if code, _ := getWithoutCredentials(t, link); code != http.StatusForbidden {
		t.Fatalf("an expired download URL: %d", code)
	}
	if code, again := getWithoutCredentials(t, dumpLink(t, s, download, a.Token)); code != http.StatusOK || len(again) != len(body) {
		t.Fatalf("a new download URL: %d, %d bytes", code, len(again))
	}

	// Seven good dumps are kept: the eighth prunes the first, record and object.
	for i := 2; i <= 8; i++ {
		dump(slug)
	}
	harness.Eventually(t, 30*time.Second, "the first dump pruned", func() bool {
		return s.Get(t, download, a.Token).Status == http.StatusNotFound
	})
	if _, err := zoneBucket.Head(context.Background(), firstKey); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("the pruned dump's object: %v", err)
	}
	if keys := objects(databaseID); len(keys) != 7 {
		t.Fatalf("%d dump objects kept, want 7: %v", len(keys), keys)
	}

	// Deleting the database takes its dumps out of the bucket.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug + "/database", Token: a.Token}); r.Status != http.StatusAccepted {
		t.Fatalf("delete the database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 60*time.Second, "the database's dumps deleted", func() bool { return len(objects(databaseID)) == 0 })

	// And deleting an app takes its database's.
	other := createApp(t, s, a.Token, "service")
	otherID := ready(other)
	dump(other)
	if n := len(objects(otherID)); n != 1 {
		t.Fatalf("%d dump objects of the second app's database, want 1", n)
	}
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + other, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete the app: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 60*time.Second, "the deleted app's dumps deleted", func() bool { return len(objects(otherID)) == 0 })
}

// takeDump asks for a dump of slug's database on request and waits until it succeeded; it
// returns the dump as the API lists it.
func takeDump(t *testing.T, s *harness.Stack, token, slug string) map[string]any {
	t.Helper()
	r := post(s, t, "/api/apps/"+slug+"/database/dumps", token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("take a dump of %s's database: %d %s", slug, r.Status, r.Body)
	}
	id := r.Map(t)["id"]
	var found map[string]any
	harness.Eventually(t, 60*time.Second, "the dump of "+slug+"'s database succeeded", func() bool {
		var dumps []map[string]any
		s.Get(t, "/api/apps/"+slug+"/database/dumps", token).JSON(t, &dumps)
		for _, d := range dumps {
			if d["id"] == id {
				if d["status"] == "failed" {
					t.Fatalf("dump %v", d)
				}
				found = d
			}
		}
		return found != nil && found["status"] == "succeeded"
	})
	return found
}

// zoneExec runs sql in database name of the zone's cluster as the database's own role.
func zoneExec(t *testing.T, name, sql string) {
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
	if _, err := c.Exec(ctx, "SET ROLE "+pgx.Identifier{name}.Sanitize()+"; "+sql); err != nil {
		t.Fatal(err)
	}
}

// dumpLink asks the API for a dump's download and returns where it redirects: 307 to a
// presigned URL of the object store, never cached.
func dumpLink(t *testing.T, s *harness.Stack, path, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.Gateway+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(loc, s.ObjectStore.URL+"/") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("download: %d to %q (Cache-Control %q)", resp.StatusCode, loc, resp.Header.Get("Cache-Control"))
	}
	return loc
}

// getWithoutCredentials GETs url as a customer's browser would follow a redirect elsewhere.
func getWithoutCredentials(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// rootBucket is bucket on the stack's S3 server seen as its root, for the test's checks.
func rootBucket(t *testing.T, s *harness.Stack, bucket string) *objectstore.Store {
	t.Helper()
	b, err := objectstore.New(objectstore.Config{URL: s.ObjectStore.URL, AccessKey: s.ObjectStore.AccessKey, SecretKey: s.ObjectStore.SecretKey, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otherZoneOn is bucket seen with the credentials of another zone (us-test), made as
// bin/bootstrap makes a zone's.
func otherZoneOn(t *testing.T, s *harness.Stack, bucket string) *objectstore.Store {
	t.Helper()
	env := s.ObjectStore.ZoneObjectStoreEnv(t, "us-test")
	b, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"],
		SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
