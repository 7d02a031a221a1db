package managed

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
)

func newName() string { return "db_" + strings.ReplaceAll(uuid.NewString(), "-", "") }

// dbURL is the URL that logs in to database name as its own role over TCP.
func dbURL(admin, name, password, database string) string {
	u, _ := url.Parse(admin)
	u.User = url.UserPassword(name, password)
	u.Path = "/" + database
	return u.String()
}

func TestClusterCreateAndDrop(t *testing.T) {
	ctx := context.Background()
	c := Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: 300 * time.Millisecond}
	a, b := newName(), newName()
	if err := c.Create(ctx, a, "pw-a", 1, 1<<28); err != nil {
		t.Fatal(err)
	}
	// Again, as a redelivered command or a plan change would: the same state, the password
	// and the limit it gives win.
	if err := c.Create(ctx, a, "pw-a2", 2, 1<<28); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, b, "pw-b", 2, 1<<28); err != nil {
		t.Fatal(err)
	}

	own, err := pgx.Connect(ctx, dbURL(c.AdminURL, a, "pw-a2", a))
	if err != nil {
		t.Fatalf("the role connects to its own database: %v", err)
	}
	defer own.Close(ctx)
	if _, err := own.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("the role writes in its own database: %v", err)
	}
	var isSuper bool
	if err := own.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&isSuper); err != nil || isSuper {
		t.Fatalf("superuser %v (%v)", isSuper, err)
	}
	// A statement past the timeout is cancelled (57014 query_canceled).
	if _, err := own.Exec(ctx, "SELECT pg_sleep(5)"); !isCode(err, "57014") {
		t.Fatalf("a statement past the timeout: %v", err)
	}

	for _, tc := range []struct{ name, user, password, database string }{
		{"the old password", a, "pw-a", a},
		{"another app's database", b, "pw-b", a},
		{"the cluster's maintenance database", a, "pw-a2", "postgres"},
		{"template1", a, "pw-a2", "template1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if conn, err := pgx.Connect(ctx, dbURL(c.AdminURL, tc.user, tc.password, tc.database)); err == nil {
				conn.Close(ctx)
				t.Fatalf("%s connected to %s", tc.user, tc.database)
			}
		})
	}

	// The plan's 2 and the zone's one: own is one, two more are admitted, a fourth refused.
	// The refused attempts above each had a backend that counted against the limit until it
	// exited, which can take a moment after the refusal: the others are admitted once they
	// are gone.
	var more []*pgx.Conn
	testinfra.Eventually(t, 5*time.Second, "the plan's second and the zone's connection admitted", func() bool {
		conn, err := pgx.Connect(ctx, dbURL(c.AdminURL, a, "pw-a2", a))
		if err != nil && !isCode(err, "53300") {
			t.Fatal(err)
		}
		if err == nil {
			more = append(more, conn)
		}
		return len(more) == 2
	})
	defer func() {
		for _, m := range more {
			m.Close(ctx)
		}
	}()
	if fourth, err := pgx.Connect(ctx, dbURL(c.AdminURL, a, "pw-a2", a)); err == nil || !isCode(err, "53300") {
		if err == nil {
			fourth.Close(ctx)
		}
		t.Fatalf("a connection past the limit: %v", err)
	}

	// A login that gained another database's role (granted by hand here, as a restore as the
	// provisioning role could once) still cannot connect to that database: pg_hba.conf names
	// each database's logins, and the refusal is the cluster's (28000), not a missing CONNECT.
	super, err := pgx.Connect(ctx, testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	if _, err := super.Exec(ctx, "GRANT "+pgx.Identifier{a}.Sanitize()+" TO "+pgx.Identifier{b}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, dbURL(c.AdminURL, b, "pw-b", a)); err == nil || !isCode(err, "28000") {
		if err == nil {
			conn.Close(ctx)
		}
		t.Fatalf("a login with another database's role connected to it: %v", err)
	}
	if conn, err := pgx.Connect(ctx, dbURL(c.AdminURL, b, "pw-b", b)); err != nil {
		t.Fatalf("the login to its own database: %v", err)
	} else {
		conn.Close(ctx)
	}

	if err := c.Drop(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := c.Drop(ctx, a); err != nil {
		t.Fatalf("dropping again: %v", err)
	}
	var left int
	if err := super.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1) + (SELECT count(*) FROM pg_roles WHERE rolname = $1)`, a).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d of the database and role left (%v)", left, err)
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"db_0123456789abcdef0123456789abcdef", true},
		{"db_0123456789ABCDEF0123456789abcdef", false},
		{"db_0123", false},
		{"postgres", false},
		{`db_0123456789abcdef0123456789abcde"`, false},
		{"", false},
	} {
		if got := ValidName(tc.name); got != tc.ok {
			t.Errorf("ValidName(%q) = %v", tc.name, got)
		}
	}
}

// The database host provisions as a role that is not the cluster's superuser, and refuses
// to start as one.
func TestRefuseSuperuserProvisioner(t *testing.T) {
	ctx := context.Background()
	if err := (Cluster{AdminURL: testinfra.ZoneProvisionerURL(t)}).RefuseSuperuser(ctx); err != nil {
		t.Fatalf("the provisioning role: %v", err)
	}
	if err := (Cluster{AdminURL: testinfra.ZonePostgresSuperURL(t)}).RefuseSuperuser(ctx); !errors.Is(err, ErrSuperuserProvisioner) {
		t.Fatalf("the cluster's superuser: %v", err)
	}
}
