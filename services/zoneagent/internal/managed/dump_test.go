package managed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// zoneBucket is zone's bucket on srv, seen through that zone's own credentials, as
// bin/bootstrap makes them.
func zoneBucket(t testing.TB, srv testinfra.ObjectStore, zone string) *objectstore.Store {
	t.Helper()
	return bucketOf(t, srv.ZoneObjectStoreEnv(t, zone), "")
}

// bucketOf is a store with the credentials in env (as bootstrap writes them) naming bucket
// ("": the holder's own).
func bucketOf(t testing.TB, env map[string]string, bucket string) *objectstore.Store {
	t.Helper()
	if bucket == "" {
		bucket = env["ZONEAGENT_OBJECT_STORE_BUCKET"]
	}
	b, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"],
		SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fetch GETs url with no credentials of its own.
func fetch(t *testing.T, url string) (int, []byte) {
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

// A dump streams into the zone's own bucket (nothing on local disk), downloads through a
// presigned URL with the very bytes pg_restore reads, stops downloading once the URL has
// expired, is unreadable with another zone's credentials, restores from the bucket, and is
// reclaimed when pruned or when its database goes. A failed dump leaves no object.
func TestDumpsLiveInTheZonesBucket(t *testing.T) {
	ctx := context.Background()
	admin := testinfra.ZoneProvisionerURL(t)
	c := Cluster{AdminURL: admin, Access: HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	name := newName()
	if err := c.Create(ctx, name, "pw", 5, 1<<28); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background(), name) })
	conn, err := pgx.Connect(ctx, dbURL(admin, name, "pw", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('one'), ('two')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	srv := testinfra.StartObjectStore(t)
	usEnv := srv.ZoneObjectStoreEnv(t, "us-1")
	eu, us := zoneBucket(t, srv, "eu-1"), bucketOf(t, usEnv, "")
	d := Dumper{Bin: "pg_dump", RestoreBin: "pg_restore", AdminURL: admin, Socket: testinfra.ZonePostgresSocket(t), Bucket: eu, Presigner: eu, URLLifetime: 2 * time.Second}
	databaseID, dumpID := uuid.NewString(), uuid.NewString()
	key := DumpKey(databaseID, dumpID)
	size, err := d.Dump(ctx, name, name, "pw", key)
	if err != nil || size == 0 {
		t.Fatalf("dump: %d bytes (%v)", size, err)
	}
	if info, err := eu.Head(ctx, key); err != nil || info.Size != size {
		t.Fatalf("the dump in the bucket: %+v (%v), reported %d bytes", info, err, size)
	}
	if _, err := os.Stat(filepath.Join(srv.DataDir, "tori-zone-eu-1", filepath.FromSlash(key))); err != nil {
		t.Fatalf("the dump is not in the eu zone's bucket on the server: %v", err)
	}

	// Downloaded through the URL, with no credentials: the stored bytes, which pg_restore reads.
	stored, _, err := eu.Get(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(stored)
	stored.Close()
	if ok, err := d.Exists(ctx, key); !ok || err != nil {
		t.Fatalf("exists: %v (%v)", ok, err)
	}
	u, lifetime, err := d.DownloadURL(ctx, key)
	if err != nil || lifetime != 2*time.Second {
		t.Fatalf("download URL: %v (%v)", lifetime, err)
	}
	issued := time.Now()
	status, got := fetch(t, u)
	if status != http.StatusOK || !bytes.Equal(got, want) || int64(len(got)) != size {
		t.Fatalf("download: %d, %d bytes of %d", status, len(got), size)
	}
	file := filepath.Join(t.TempDir(), "app.dump")
	if err := os.WriteFile(file, got, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pg_restore", "--list", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "TABLE DATA public notes") {
		t.Fatalf("pg_restore --list: %v\n%s", err, out)
	}

	// Another zone's credentials reach nothing of it: not directly, not by a URL they sign.
	if _, err := us.Head(ctx, key); err == nil {
		t.Fatal("the us zone's credentials see the eu zone's dump")
	}
	usOnEU := bucketOf(t, usEnv, eu.Bucket())
	if _, _, err := usOnEU.Get(ctx, key, nil); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Fatalf("the us zone reading the eu zone's dump: %v", err)
	}
	if stolen, err := usOnEU.PresignGet(ctx, key, time.Minute); err == nil {
		if status, _ := fetch(t, stolen); status != http.StatusForbidden {
			t.Fatalf("a URL the us zone signed for the eu zone's dump: %d", status)
		}
	}
	if n, err := (Dumper{Bucket: us}).DeleteDatabase(ctx, databaseID); err != nil || n != 0 {
		t.Fatalf("the us zone deleting the eu zone's dumps: %d (%v)", n, err)
	}
	if _, err := eu.Head(ctx, key); err != nil {
		t.Fatalf("the dump after the us zone's delete: %v", err)
	}

	// Once the URL's lifetime is over it reads nothing.
	time.Sleep(time.Until(issued.Add(lifetime + 2*time.Second)))
	if status, _ := fetch(t, u); status != http.StatusForbidden {
		t.Fatalf("an expired URL: %d", status)
	}

	// Restored from the bucket into a database of its own.
	restored := newName()
	if err := c.Create(ctx, restored, "pw2", 5, 1<<28); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background(), restored) })
	if err := d.Restore(ctx, restored, "pw2", key); err != nil {
		t.Fatal(err)
	}
	rc, err := pgx.Connect(ctx, dbURL(admin, restored, "pw2", restored))
	if err != nil {
		t.Fatal(err)
	}
	var count int
	if err := rc.QueryRow(ctx, "SELECT count(*) FROM notes").Scan(&count); err != nil || count != 2 {
		t.Fatalf("restored notes: %d (%v)", count, err)
	}
	rc.Close(ctx)

	// A failed pg_dump (no such database) leaves nothing at its key.
	failedKey := DumpKey(databaseID, uuid.NewString())
	if _, err := d.Dump(ctx, newName(), name, "pw", failedKey); err == nil {
		t.Fatal("a dump of a database that does not exist succeeded")
	}
	if _, err := eu.Head(ctx, failedKey); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("a failed dump left an object: %v", err)
	}
	if ok, err := d.Exists(ctx, failedKey); ok || err != nil {
		t.Fatalf("a failed dump exists: %v (%v)", ok, err)
	}

	// Pruned: the object goes, counted; deleting it again is done already.
	pruned := testutil.ToFloat64(dumpsReclaimed.WithLabelValues("pruned"))
	second := DumpKey(databaseID, uuid.NewString())
	if _, err := d.Dump(ctx, name, name, "pw", second); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Delete(ctx, []string{key}); err != nil || n != 1 {
		t.Fatalf("delete the pruned dump: %d (%v)", n, err)
	}
	if n, err := d.Delete(ctx, []string{key}); err != nil || n != 0 {
		t.Fatalf("delete it again: %d (%v)", n, err)
	}
	if _, err := eu.Head(ctx, key); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("the pruned dump: %v", err)
	}
	if got := testutil.ToFloat64(dumpsReclaimed.WithLabelValues("pruned")) - pruned; got != 1 {
		t.Fatalf("pruned dumps counted %v, want 1", got)
	}
	// The database gone: every dump of it goes, and no other database's.
	otherDB := DumpKey(uuid.NewString(), uuid.NewString())
	if _, err := eu.Put(ctx, otherDB, strings.NewReader("another database's dump"), -1, ""); err != nil {
		t.Fatal(err)
	}
	gone := testutil.ToFloat64(dumpsReclaimed.WithLabelValues("database_deleted"))
	if n, err := d.DeleteDatabase(ctx, databaseID); err != nil || n != 1 {
		t.Fatalf("delete the database's dumps: %d (%v)", n, err)
	}
	if _, err := eu.Head(ctx, second); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("a deleted database's dump: %v", err)
	}
	if _, err := eu.Head(ctx, otherDB); err != nil {
		t.Fatalf("another database's dump went too: %v", err)
	}
	if got := testutil.ToFloat64(dumpsReclaimed.WithLabelValues("database_deleted")) - gone; got != 1 {
		t.Fatalf("deleted databases' dumps counted %v, want 1", got)
	}
	if _, err := d.DeleteDatabase(ctx, ""); err == nil {
		t.Fatal("an empty database id was taken as a prefix")
	}
}
