package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// Provisioner is a zone's managed-database role: it may create databases and roles on the
// zone's own cluster (one of each per app) and is never a superuser.
type Provisioner struct {
	Role     string
	Password string
	// Addr is host:port where the zone reaches the cluster over TCP (password
	// authentication), e.g. 127.0.0.1:5433.
	Addr string
}

// EnsureProvisioner creates p's role on the cluster superURL reaches (a superuser; for
// scripts/zone-postgres.sh's cluster, postgres over the Unix socket), or brings an existing
// one back to LOGIN CREATEDB CREATEROLE NOSUPERUSER with p's password, a member of
// pg_read_all_stats and pg_signal_backend, with its line in the cluster's pg_hba.conf.
func EnsureProvisioner(ctx context.Context, superURL string, p Provisioner) error {
	if !identRe.MatchString(p.Role) || p.Password == "" {
		return fmt.Errorf("pgstore: invalid provisioning role %q", p.Role)
	}
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return fmt.Errorf("pgstore: connect to the zone cluster: %w", err)
	}
	defer conn.Close(ctx)
	unlock, err := LockRoles(ctx, conn)
	if err != nil {
		return err
	}
	defer unlock()
	role := pgx.Identifier{p.Role}.Sanitize()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, p.Role).Scan(&exists); err != nil {
		return fmt.Errorf("pgstore: look up role: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE ROLE "+role); err != nil && !isCode(err, "42710") {
			return fmt.Errorf("pgstore: create provisioning role: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, "ALTER ROLE "+role+" LOGIN CREATEDB CREATEROLE NOSUPERUSER NOREPLICATION NOBYPASSRLS PASSWORD "+quoteLiteral(p.Password)); err != nil {
		return fmt.Errorf("pgstore: set provisioning role: %w", err)
	}
	// An app's role may connect to its own database alone: the cluster's own databases are
	// closed to PUBLIC, and open to the provisioning roles that work in them.
	for _, s := range []string{
		"REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM PUBLIC",
		"REVOKE CONNECT, TEMPORARY ON DATABASE template1 FROM PUBLIC",
		"GRANT CONNECT ON DATABASE postgres TO " + role,
		// What the zone's maintenance reads and ends (the statement watchdog, a retired
		// login's sessions) it reaches through these, not through membership in a login.
		"GRANT pg_read_all_stats, pg_signal_backend TO " + role,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("pgstore: %s: %w", s, err)
		}
	}
	// Its line in the cluster's pg_hba.conf, where the cluster keeps a zone section; a
	// cluster that is not this host's or has none is its operator's to open.
	if err := KeepZoneHBA(ctx, superURL); err != nil && !errors.Is(err, ErrZoneHBAUnmanaged) && !errors.Is(err, ErrZoneHBANotLocal) {
		return err
	}
	return nil
}

// LockRoles takes the cluster-wide lock under which provisioning roles are made, granted the
// maintenance database and dropped, until unlock. Postgres refuses a second concurrent
// GRANT or REVOKE on the same database ("tuple concurrently updated") rather than waiting,
// so everything that edits the maintenance database's privileges takes this lock first.
func LockRoles(ctx context.Context, conn *pgx.Conn) (unlock func(), err error) {
	return advisoryLock(ctx, conn, "tori.pgstore.roles")
}

// ProvisionerURL is the URL that logs in as p over TCP, in the maintenance database.
func ProvisionerURL(p Provisioner) (string, error) {
	if _, _, err := net.SplitHostPort(p.Addr); err != nil {
		return "", fmt.Errorf("pgstore: zone cluster address %q: %w", p.Addr, err)
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(p.Role, p.Password), Host: p.Addr, Path: "/postgres", RawQuery: "sslmode=disable"}
	return u.String(), nil
}
