package pooler

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/managed"
)

func loginURL(p *Pooler, name, login, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(login, password), Host: p.Listen, Path: "/" + name,
		RawQuery: "sslmode=disable&default_query_exec_mode=simple_protocol"}
	return u.String()
}

// A rotation through the real cluster and pooler: after it both passwords work and what
// either makes is the owner's; retired, the old one is refused (and its open session ended)
// while the new one works; a second rotation moves back to the owner's login, and the
// database and its roles drop.
func TestRotationKeepsBothUntilRetired(t *testing.T) {
	ctx := context.Background()
	c := managed.Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: managed.HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	p := startPooler(t, 2*time.Second)
	n := newName()
	t.Cleanup(func() { _ = c.Drop(context.Background(), n) })
	if err := c.Create(ctx, n, "pw-1", 3, 1<<28); err != nil {
		t.Fatal(err)
	}
	if err := p.Admit(ctx, n, "pw-1", 3); err != nil {
		t.Fatal(err)
	}
	connect := func(login, pw string) (*pgx.Conn, error) { return pgx.Connect(ctx, loginURL(p, n, login, pw)) }
	oldConn, err := connect(n, "pw-1")
	if err != nil {
		t.Fatal(err)
	}
	defer oldConn.Close(ctx)
	if _, err := oldConn.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	next := managed.OtherLogin(n, n)
	if err := c.SetLogin(ctx, n, next, "pw-2", 3); err != nil {
		t.Fatal(err)
	}
	if err := p.Rotate(ctx, n, next, "pw-2", "r1"); err != nil {
		t.Fatal(err)
	}
	if l, pw, ok := p.Login(n); !ok || l != next || pw != "pw-2" || p.LastRotation(n) != "r1" {
		t.Fatalf("current login %q", l)
	}
	newConn, err := connect(next, "pw-2")
	if err != nil {
		t.Fatalf("the new password through the pooler: %v", err)
	}
	defer newConn.Close(ctx)
	if _, err := newConn.Exec(ctx, "INSERT INTO t VALUES (2); CREATE TABLE u (v int)"); err != nil {
		t.Fatalf("the new login writes the owner's table: %v", err)
	}
	var owner string
	if err := newConn.QueryRow(ctx, "SELECT tableowner FROM pg_tables WHERE tablename = 'u'").Scan(&owner); err != nil || owner != n {
		t.Fatalf("a table made by the new login is owned by %q (%v), want the owner role", owner, err)
	}
	again, err := connect(n, "pw-1")
	if err != nil {
		t.Fatalf("the old password still works after the rotation: %v", err)
	}
	again.Close(ctx)
	if bad, err := connect(next, "pw-1"); err == nil {
		bad.Close(ctx)
		t.Fatal("the old password logs in as the new login")
	}

	if err := c.Retire(ctx, n, n); err != nil {
		t.Fatal(err)
	}
	if err := p.RetireOld(ctx, n); err != nil {
		t.Fatal(err)
	}
	if bad, err := connect(n, "pw-1"); err == nil {
		bad.Close(ctx)
		t.Fatal("the old password works after it was retired")
	}
	// The session opened with the old password is over: its pooler's server connection was
	// ended, and the pooler cannot log in as the retired login again.
	if _, err := oldConn.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a session of the old password goes on after it was retired")
	}
	var count int
	if err := newConn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&count); err != nil || count != 2 {
		t.Fatalf("the new password after the retirement: %d rows (%v)", count, err)
	}
	// A dump runs as the login in use, the owner's login being retired.
	bucket := zoneBucket(t)
	d := managed.Dumper{Bin: "pg_dump", RestoreBin: "pg_restore", AdminURL: c.AdminURL, Socket: testinfra.ZonePostgresSocket(t), Bucket: bucket, Presigner: bucket, URLLifetime: time.Minute}
	if size, err := d.Dump(ctx, n, next, "pw-2", "dumps/"+uuid.NewString()+"/"+uuid.NewString()+".dump"); err != nil || size == 0 {
		t.Fatalf("a dump as the second login: %d bytes (%v)", size, err)
	}
	direct, err := pgx.Connect(ctx, dbURL(c.AdminURL, n, "pw-1", n))
	if err == nil {
		direct.Close(ctx)
		t.Fatal("the retired login connects to the cluster directly")
	}

	// The next rotation goes back to the owner's login, with a password of its own.
	back := managed.OtherLogin(n, next)
	if err := c.SetLogin(ctx, n, back, "pw-3", 3); err != nil {
		t.Fatal(err)
	}
	if err := p.Rotate(ctx, n, back, "pw-3", "r2"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ login, pw string }{{back, "pw-3"}, {next, "pw-2"}} {
		conn, err := connect(tc.login, tc.pw)
		if err != nil {
			t.Fatalf("%s after the second rotation: %v", tc.pw, err)
		}
		conn.Close(ctx)
	}
	if bad, err := connect(n, "pw-1"); err == nil {
		bad.Close(ctx)
		t.Fatal("the first password came back with its login")
	}

	if err := c.Drop(ctx, n); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, c.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var roles int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE rolname IN ($1, $2)", n, managed.SecondLogin(n)).Scan(&roles); err != nil || roles != 0 {
		t.Fatalf("%d roles left after the drop (%v)", roles, err)
	}
}

// zoneBucket is a zone's own bucket on an S3 server of the test's own, with that zone's
// credentials, as bin/bootstrap makes them.
func zoneBucket(t *testing.T) *objectstore.Store {
	t.Helper()
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "local")
	b, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"],
		SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: env["ZONEAGENT_OBJECT_STORE_BUCKET"]})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
