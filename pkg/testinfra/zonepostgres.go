package testinfra

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
)

// defaultZonePostgres is the cluster scripts/zone-postgres.sh makes, as its superuser over
// the Unix socket (root may log in as postgres there).
const defaultZonePostgres = "postgres://postgres@/postgres?host=/var/run/postgresql&port=5433&sslmode=disable"

// ZonePostgresSuperURL is a superuser URL of the zone's managed-database cluster:
// TEST_ZONE_POSTGRES_URL (the Makefile sets it), else that cluster over its socket.
func ZonePostgresSuperURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("TEST_ZONE_POSTGRES_URL"); u != "" {
		return u
	}
	return defaultZonePostgres
}

// ZoneProvisionerURL makes a provisioning role of this test's own on the zone cluster (LOGIN
// CREATEDB CREATEROLE, random password, as bin/bootstrap makes the zone's) and returns the
// URL that logs in as it over TCP with its password. When the test ends, every database owned
// by a role the provisioner holds (the apps' roles, which it grants itself to own their
// databases), those roles and the provisioner go.
func ZoneProvisionerURL(t testing.TB) string {
	t.Helper()
	super := ZonePostgresSuperURL(t)
	addr := os.Getenv("TEST_ZONE_POSTGRES_ADDR")
	if addr == "" {
		addr = "127.0.0.1:5433"
	}
	p := pgstore.Provisioner{Role: "t_" + randomHex(6) + "_prov", Password: randomHex(16), Addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pgstore.EnsureProvisioner(ctx, super, p); err != nil {
		t.Fatalf("testinfra: zone provisioner: %v", err)
	}
	t.Cleanup(func() { dropProvisioner(t, super, p.Role) })
	u, err := pgstore.ProvisionerURL(p)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func dropProvisioner(t testing.TB, super, role string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, super)
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `
		SELECT r.rolname FROM pg_auth_members m
		JOIN pg_roles r ON r.oid = m.roleid
		JOIN pg_roles p ON p.oid = m.member
		WHERE p.rolname = $1 AND r.rolname !~ '^pg_'`, role)
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	owners = append(owners, role)
	dbs, err := c.Query(ctx, `
		SELECT d.datname FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba
		WHERE r.rolname = ANY($1)`, owners)
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	names, err := pgx.CollectRows(dbs, pgx.RowTo[string])
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	for _, db := range names {
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("testinfra: drop database %s: %v", db, err)
		}
	}
	dropTablespaces(ctx, t, c, role)
	unlock, err := pgstore.LockRoles(ctx, c)
	if err != nil {
		t.Errorf("testinfra: drop provisioner %s: %v", role, err)
		return
	}
	defer unlock()
	for _, r := range owners {
		if strings.HasPrefix(r, "db_") && !strings.HasSuffix(r, "_b") {
			// A database's second login is no member of the provisioner (managed/logins.go).
			if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r + "_b"}.Sanitize()); err != nil {
				t.Errorf("testinfra: drop role %s_b: %v", r, err)
			}
		}
		// The provisioner's CONNECT on the maintenance database would keep it.
		if _, err := c.Exec(ctx, "REVOKE ALL ON DATABASE postgres FROM "+pgx.Identifier{r}.Sanitize()); err != nil {
			t.Errorf("testinfra: revoke from %s: %v", r, err)
		}
		if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r}.Sanitize()); err != nil {
			t.Errorf("testinfra: drop role %s: %v", r, err)
		}
	}
	// Their lines leave the cluster's pg_hba.conf (where the zone keeps it).
	if err := pgstore.KeepZoneHBA(ctx, super); err != nil && !errors.Is(err, pgstore.ErrZoneHBAUnmanaged) && !errors.Is(err, pgstore.ErrZoneHBANotLocal) {
		t.Errorf("testinfra: pg_hba.conf after dropping %s: %v", role, err)
	}
}

// dropTablespaces drops the tablespaces the provisioner owns (the zone's ceilings, one per
// database) and unmounts the filesystem each sits on (its folder's parent), so no test
// leaves a loop device behind.
func dropTablespaces(ctx context.Context, t testing.TB, c *pgx.Conn, role string) {
	rows, err := c.Query(ctx, `SELECT spcname, pg_tablespace_location(t.oid) FROM pg_tablespace t
		JOIN pg_roles r ON r.oid = t.spcowner WHERE r.rolname = $1`, role)
	if err != nil {
		t.Errorf("testinfra: tablespaces of %s: %v", role, err)
		return
	}
	type space struct{ name, location string }
	spaces, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (space, error) {
		var s space
		return s, r.Scan(&s.name, &s.location)
	})
	if err != nil {
		t.Errorf("testinfra: tablespaces of %s: %v", role, err)
		return
	}
	for _, s := range spaces {
		// The zone's crash reserve sits in the tablespace's pgsql_tmp, which DROP TABLESPACE
		// wants empty (the zone's own Drop removes it first too).
		reserves, _ := filepath.Glob(filepath.Join(s.location, "PG_*", "pgsql_tmp", "pgsql_tmp_*"))
		for _, r := range reserves {
			_ = os.Remove(r)
		}
		if _, err := c.Exec(ctx, "DROP TABLESPACE IF EXISTS "+pgx.Identifier{s.name}.Sanitize()); err != nil {
			t.Errorf("testinfra: drop tablespace %s: %v", s.name, err)
			continue
		}
		mount := filepath.Dir(s.location)
		_ = syscall.Unmount(mount, syscall.MNT_DETACH)
		_ = os.Remove(mount)
		// The agent's folder of mount points, once empty (a folder per test's DATA_DIR).
		_ = os.Remove(filepath.Dir(mount))
	}
}

// ZonePostgresSocket is the directory of the zone cluster's Unix socket, where the zone's
// dumps and restores connect (ZonePostgresSuperURL's host).
func ZonePostgresSocket(t testing.TB) string {
	t.Helper()
	c, err := pgx.ParseConfig(ZonePostgresSuperURL(t))
	if err != nil || !strings.HasPrefix(c.Host, "/") {
		t.Fatalf("testinfra: the zone cluster's superuser URL names no Unix socket (%v)", err)
	}
	return c.Host
}
