package pooler

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/managed"
)

// startPooler runs a pooler of the test's own in front of the zone cluster.
func startPooler(t *testing.T, wait time.Duration) *Pooler {
	t.Helper()
	runAs := ""
	if os.Geteuid() == 0 {
		runAs = "postgres"
	}
	rt, err := os.MkdirTemp("", "tori-pooler-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	p := &Pooler{Bin: "pgbouncer", Dir: filepath.Join(t.TempDir(), "pooler"), RuntimeDir: rt, Listen: testinfra.FreeAddr(t),
		Cluster: "127.0.0.1:5433", QueryWaitTimeout: wait, RunAs: runAs, Log: slog.New(slog.DiscardHandler)}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	testinfra.Background(t, "pooler", p.Run)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func poolerURL(p *Pooler, name, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(name, password), Host: p.Listen, Path: "/" + name,
		RawQuery: "sslmode=disable&default_query_exec_mode=simple_protocol"}
	return u.String()
}

// A database admitted at the running pooler is reached through it with its own password and
// no other; a transaction past its pool waits and fails after query_wait_timeout; removed,
// it is reached no more; all of it without restarting the pooler.
func TestPoolerAdmitsOnline(t *testing.T) {
	ctx := context.Background()
	c := managed.Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: managed.HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	p := startPooler(t, 2*time.Second)
	a, b := newName(), newName()
	for _, n := range []string{a, b} {
		if err := c.Create(ctx, n, "pw-"+n, 2, 1<<28); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Admit(ctx, a, "pw-"+a, 1); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, poolerURL(p, a, "pw-"+a))
	if err != nil {
		t.Fatalf("through the pooler: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 7 {
		t.Fatalf("read %d (%v)", v, err)
	}
	if bad, err := pgx.Connect(ctx, poolerURL(p, a, "wrong")); err == nil {
		bad.Close(ctx)
		t.Fatal("a wrong password through the pooler")
	}
	if other, err := pgx.Connect(ctx, poolerURL(p, b, "pw-"+b)); err == nil {
		// Not admitted yet: PgBouncer knows neither the user nor the database.
		err = other.Ping(ctx)
		other.Close(ctx)
		if err == nil {
			t.Fatal("a database not admitted is reached")
		}
	}

	// Pool of one: a transaction holds it, a second client's waits and fails after 2 s.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	second, err := pgx.Connect(ctx, poolerURL(p, a, "pw-"+a))
	if err == nil {
		_, err = second.Exec(ctx, "SELECT 1")
		second.Close(ctx)
	}
	if err == nil {
		t.Fatal("a transaction past the pool did not fail")
	}
	t.Logf("past the pool: %v", err)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	if err := p.Admit(ctx, b, "pw-"+b, 2); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, poolerURL(p, b, "pw-"+b))
	if err != nil {
		t.Fatalf("admitted online: %v", err)
	}
	other.Close(ctx)
	if pw, ok := p.Password(b); !ok || pw != "pw-"+b {
		t.Fatal("the pooler's record lacks the password")
	}

	if err := p.Remove(ctx, b); err != nil {
		t.Fatal(err)
	}
	if gone, err := pgx.Connect(ctx, poolerURL(p, b, "pw-"+b)); err == nil {
		err = gone.Ping(ctx)
		gone.Close(ctx)
		if err == nil {
			t.Fatal("a removed database is still reached")
		}
	}
	// The first database's session survived both reloads.
	if err := conn.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil {
		t.Fatalf("after the reloads: %v", err)
	}
}

// A restarted agent reopens the same record: the passwords survive.
func TestPoolerRecordSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	p := &Pooler{Dir: dir, Listen: "127.0.0.1:1", Cluster: "127.0.0.1:5433", QueryWaitTimeout: time.Second}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	p.state.Databases["db_0123456789abcdef0123456789abcdef"] = pooledDBFile{Password: "x", PoolSize: 3}
	if err := p.writeFiles(); err != nil {
		t.Fatal(err)
	}
	q := &Pooler{Dir: dir, Listen: "127.0.0.1:1", Cluster: "127.0.0.1:5433", QueryWaitTimeout: time.Second}
	if err := q.Open(); err != nil {
		t.Fatal(err)
	}
	if pw, ok := q.Password("db_0123456789abcdef0123456789abcdef"); !ok || pw != "x" || q.state.AdminPassword != p.state.AdminPassword {
		t.Fatal("the record did not survive")
	}
	for _, f := range []string{"state.json", "users.txt", "hba.txt", "pgbouncer.ini"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi.Mode(), err)
		}
	}
}
