package pooler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/managed"
)

// The HBA file PgBouncer reads names, per database, exactly the logins the record admits for
// it (the current one and, until retired, the one a rotation moved from), the admin console
// for the agent's admin user alone, and is written at Open and rewritten at every change.
func TestHBAFileNamesEachDatabasesOwnLogins(t *testing.T) {
	const a, b = "db_0123456789abcdef0123456789abcdef", "db_fedcba9876543210fedcba9876543210"
	dir := t.TempDir()
	p := &Pooler{Dir: dir, Listen: "127.0.0.1:1", Cluster: "127.0.0.1:5433", QueryWaitTimeout: time.Second}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		body, err := os.ReadFile(filepath.Join(dir, "hba.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	const header = "# Written by the zone agent (internal/pooler); rewritten on every change.\n" +
		"# One database, its own logins; no line matches anything else, which PgBouncer rejects.\n" +
		`host "pgbouncer" "tori_pooler_admin" 0.0.0.0/0 scram-sha-256` + "\n" +
		`host "pgbouncer" "tori_pooler_admin" ::/0 scram-sha-256` + "\n"
	if got := read(); got != header {
		t.Fatalf("at Open the HBA file is\n%s", got)
	}

	p.mu.Lock()
	p.state.Databases[b] = pooledDBFile{Login: managed.SecondLogin(b), Password: "new", OldLogin: b, OldPassword: "old", PoolSize: 2}
	p.state.Databases[a] = pooledDBFile{Password: "x", PoolSize: 3}
	err := p.writeFiles()
	p.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	want := header +
		`host "` + a + `" "` + a + `" 0.0.0.0/0 scram-sha-256` + "\n" +
		`host "` + a + `" "` + a + `" ::/0 scram-sha-256` + "\n" +
		`host "` + b + `" "` + b + `_b","` + b + `" 0.0.0.0/0 scram-sha-256` + "\n" +
		`host "` + b + `" "` + b + `_b","` + b + `" ::/0 scram-sha-256` + "\n"
	if got := read(); got != want {
		t.Fatalf("the HBA file is\n%s\nwant\n%s", got, want)
	}

	// Retired and removed (as RetireOld and Remove change the record): the old login and the
	// database leave the file.
	p.mu.Lock()
	d := p.state.Databases[b]
	d.OldLogin, d.OldPassword = "", ""
	p.state.Databases[b] = d
	delete(p.state.Databases, a)
	err = p.writeFiles()
	p.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	want = header +
		`host "` + b + `" "` + b + `_b" 0.0.0.0/0 scram-sha-256` + "\n" +
		`host "` + b + `" "` + b + `_b" ::/0 scram-sha-256` + "\n"
	if got := read(); got != want {
		t.Fatalf("after the retirement and the removal the HBA file is\n%s\nwant\n%s", got, want)
	}
}

// loginRejected reports whether err is PgBouncer's own refusal of a login its HBA file
// matches no line for (Postgres never words it so: its own says "pg_hba.conf" or "permission
// denied").
func loginRejected(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Message == "login rejected"
}

// A login that gained another database's role on the cluster (granted by hand, as the
// cluster's superuser) is refused that database by PgBouncer itself, while its own works on;
// through a rotation each of the two logins reaches its own database only, and the pooler's
// record, rewritten and reloaded at every change, follows the databases made and dropped.
func TestPoolerRefusesALoginAnotherDatabase(t *testing.T) {
	ctx := context.Background()
	c := managed.Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: managed.HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	p := startPooler(t, 2*time.Second)
	mine, theirs := newName(), newName()
	for _, n := range []string{mine, theirs} {
		if err := c.Create(ctx, n, "pw-"+n, 2, 1<<28); err != nil {
			t.Fatal(err)
		}
		if err := p.Admit(ctx, n, "pw-"+n, 2); err != nil {
			t.Fatal(err)
		}
	}
	super, err := pgx.Connect(ctx, testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	if _, err := super.Exec(ctx, "GRANT "+theirs+" TO "+mine); err != nil {
		t.Fatal(err)
	}
	// The grant is real: on the cluster the login now holds CONNECT on the other database.
	var can bool
	if err := super.QueryRow(ctx, "SELECT has_database_privilege($1, $2, 'CONNECT')", mine, theirs).Scan(&can); err != nil || !can {
		t.Fatalf("the grant gave no CONNECT on the other database (%v)", err)
	}

	connect := func(login, pw, database string) error {
		conn, err := pgx.Connect(ctx, loginURL(p, database, login, pw))
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "SELECT 1")
		return err
	}
	refused := func(what, login, pw, database string) {
		t.Helper()
		if err := connect(login, pw, database); !loginRejected(err) {
			t.Fatalf("%s: want PgBouncer's \"login rejected\", got %v", what, err)
		}
	}
	refused("the login with the other database's role", mine, "pw-"+mine, theirs)
	if err := connect(mine, "pw-"+mine, mine); err != nil {
		t.Fatalf("the login's own database: %v", err)
	}

	// A rotation: both logins reach their database during the grace period, neither another.
	next := managed.SecondLogin(mine)
	if err := c.SetLogin(ctx, mine, next, "pw-2", 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Rotate(ctx, mine, next, "pw-2", "r1"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ login, pw string }{{mine, "pw-" + mine}, {next, "pw-2"}} {
		if err := connect(l.login, l.pw, mine); err != nil {
			t.Fatalf("%s during the grace period: %v", l.login, err)
		}
		refused(l.login+" to the other database", l.login, l.pw, theirs)
	}
	// Retired, the old login is refused its own database too; the new one works on.
	if err := c.Retire(ctx, mine, mine); err != nil {
		t.Fatal(err)
	}
	if err := p.RetireOld(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := connect(mine, "pw-"+mine, mine); err == nil {
		t.Fatal("the retired login through the pooler")
	}
	if err := connect(next, "pw-2", mine); err != nil {
		t.Fatalf("the new login after the retirement: %v", err)
	}

	// A database made later is its own login's alone as well; dropped, nobody reaches it.
	later := newName()
	if err := c.Create(ctx, later, "pw-"+later, 2, 1<<28); err != nil {
		t.Fatal(err)
	}
	if err := p.Admit(ctx, later, "pw-"+later, 2); err != nil {
		t.Fatal(err)
	}
	if err := connect(later, "pw-"+later, later); err != nil {
		t.Fatalf("a database admitted later: %v", err)
	}
	refused("a later database's login to another", later, "pw-"+later, theirs)
	if err := p.Remove(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	refused("a removed database's own login", theirs, "pw-"+theirs, theirs)
}
