// Package managed is the zone's side of managed databases: the zone's own Postgres cluster,
// where each app gets a database and a role of its own, and the PgBouncer pooler in front of
// it, the only way an app reaches its database. It decides nothing: the use cases are in
// internal/usecase.
package managed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/contract/names"
)

// ValidName reports whether name is a managed database's name; nothing else ever reaches
// SQL or the pooler's files.
func ValidName(name string) bool { return names.ValidDatabaseName(name) }

// Cluster is the zone's managed-database cluster, reached as its provisioning role (LOGIN
// CREATEDB CREATEROLE, never a superuser): ZONE_POSTGRES_ADMIN_URL.
type Cluster struct {
	AdminURL string
	// StatementTimeout is set on every database's role: a statement running longer is
	// cancelled (decisions.md: 60 s; DATABASE_STATEMENT_TIMEOUT shortens it for tests).
	StatementTimeout time.Duration
	// Ceilings, when set, puts each database on a filesystem of its own (ceiling.go): the
	// database host's root helper (internal/dbhelper) or, as root, *Ceilings itself; nil (no
	// root on the host) leaves the soft cap alone.
	Ceilings CeilingSteps
	// Access, when set, rebuilds the cluster's pg_hba.conf section from the catalog after
	// each database comes or goes (access.go): the root helper, or HBAKeeper as root.
	Access AccessKeeper
}

// CeilingSteps are the privileged steps of a database's ceiling (mounting its filesystem,
// its tablespace as the cluster's superuser, the reserves in files of root's and the
// cluster's user's): *Ceilings does them, and the database host asks the root helper for
// each (internal/dbhelper), one step with checked arguments at a time.
type CeilingSteps interface {
	Ensure(ctx context.Context, name string, capBytes int64, tablespaceOwner string) error
	Tend(name string, capBytes int64) (bool, error)
	DropCrashReserve(name string) error
	Release(name string) error
}

// ZoneConnections is how many sessions above the plan's a database's logins may open: the
// pooler holds the customer to the plan's databaseConnections (max_db_connections), so a
// dump or restore of the zone's, under the same login, always finds one free.
const ZoneConnections = 1

// roleLimit is the CONNECTION LIMIT of a login whose plan gives connLimit.
func roleLimit(connLimit int) int { return connLimit + ZoneConnections }

func (c Cluster) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.AdminURL)
	if err != nil {
		return nil, fmt.Errorf("managed: connect to the zone cluster: %w", err)
	}
	return conn, nil
}

// Create makes the database name owned by a role of the same name that logs in with
// password, may hold connLimit sessions (and the zone's one) and has its statements
// cancelled past the timeout. Nobody else may connect to it, and it admits no other login
// (pg_hba.conf). With Ceilings its files live in a tablespace on a
// filesystem of about 110 % of capBytes. Run again, it brings what exists to the same state
// (the password, a larger cap included), so a redelivered command, a plan change or a
// half-done earlier try ends the same.
func (c Cluster) Create(ctx context.Context, name, password string, connLimit int, capBytes int64) error {
	if !ValidName(name) || password == "" || connLimit < 1 {
		return fmt.Errorf("managed: create %q: invalid name, password or limit", name)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	var roleExists, dbExists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
		EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&roleExists, &dbExists); err != nil {
		return fmt.Errorf("managed: look up %s: %w", name, err)
	}
	if !roleExists {
		// CREATE ROLE gives none of the attributes (superuser, createdb, createrole, …).
		if _, err := conn.Exec(ctx, "CREATE ROLE "+ident+" NOLOGIN"); err != nil && !isCode(err, "42710") {
			return fmt.Errorf("managed: create role %s: %w", name, err)
		}
	}
	stmts := []string{
		// The provisioning role becomes a member so it may give the database to the role and
		// drop both later; the app's role gains nothing from it.
		"GRANT " + ident + " TO CURRENT_USER",
		"ALTER ROLE " + ident + " LOGIN" +
			fmt.Sprintf(" CONNECTION LIMIT %d PASSWORD %s", roleLimit(connLimit), quoteLiteral(password)),
		fmt.Sprintf("ALTER ROLE %s SET statement_timeout = %s", ident, quoteLiteral(fmt.Sprintf("%dms", c.StatementTimeout.Milliseconds()))),
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("managed: set up role %s: %w", name, redact(err, password))
		}
	}
	placement := ""
	if c.Ceilings != nil {
		var provisioner string
		if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&provisioner); err != nil {
			return fmt.Errorf("managed: who provisions: %w", err)
		}
		if err := c.Ceilings.Ensure(ctx, name, capBytes, provisioner); err != nil {
			return err
		}
		placement = " TABLESPACE " + ident
	}
	if !dbExists {
		// CREATE DATABASE runs outside a transaction; pgx's Exec sends it alone. FILE_COPY
		// writes every block of the new database's files at once; Postgres 15's default
		// (WAL_LOG) leaves them sparse, their pages dirty in shared buffers, so a database
		// filled before the next checkpoint made that checkpoint, and every later one of the
		// cluster, fail for want of room (docs/tenants-ceilings.md).
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident+" OWNER "+ident+placement+" STRATEGY FILE_COPY"); err != nil && !isCode(err, "42P04") {
			return fmt.Errorf("managed: create database %s: %w", name, err)
		}
	} else if placement != "" {
		if err := moveOntoCeiling(ctx, conn, name); err != nil {
			return err
		}
	}
	for _, s := range []string{
		"ALTER DATABASE " + ident + " OWNER TO " + ident,
		"REVOKE ALL ON DATABASE " + ident + " FROM PUBLIC",
		"GRANT CONNECT, TEMPORARY ON DATABASE " + ident + " TO " + ident,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("managed: set up database %s: %w", name, err)
		}
	}
	// Its lines in pg_hba.conf before anyone is handed its credentials.
	return c.keepAccess(ctx)
}

// SetCeiling brings database name's ceiling to capBytes (grown, never shrunk) and moves a
// database made before its ceiling onto it.
func (c Cluster) SetCeiling(ctx context.Context, name string, capBytes int64) error {
	if c.Ceilings == nil {
		return nil
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var provisioner string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&provisioner); err != nil {
		return fmt.Errorf("managed: who provisions: %w", err)
	}
	if err := c.Ceilings.Ensure(ctx, name, capBytes, provisioner); err != nil {
		return err
	}
	return moveOntoCeiling(ctx, conn, name)
}

// TendCeiling keeps database name's reserve (ceiling.go): given back when its filesystem is
// full, so the recovery can run, kept again once there is room.
func (c Cluster) TendCeiling(_ context.Context, name string, capBytes int64) error {
	if c.Ceilings == nil {
		return nil
	}
	_, err := c.Ceilings.Tend(name, capBytes)
	return err
}

// moveOntoCeiling moves a database made before its ceiling into its tablespace. That needs
// nobody connected, so one in use stays where it is until a later command (a plan change)
// finds it idle.
func moveOntoCeiling(ctx context.Context, conn *pgx.Conn, name string) error {
	var placed bool
	if err := conn.QueryRow(ctx, `SELECT t.spcname = d.datname FROM pg_database d
		JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE d.datname = $1`, name).Scan(&placed); err != nil {
		return fmt.Errorf("managed: where is %s: %w", name, err)
	}
	if placed {
		return nil
	}
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident+" SET TABLESPACE "+ident); err != nil && !isCode(err, "55006") {
		return fmt.Errorf("managed: move database %s onto its ceiling: %w", name, err)
	}
	return nil
}

// SetConnectionLimit changes the role's CONNECTION LIMIT (a plan change) to connLimit and
// the zone's own.
func (c Cluster) SetConnectionLimit(ctx context.Context, name string, connLimit int) error {
	if !ValidName(name) || connLimit < 1 {
		return fmt.Errorf("managed: limit %q: invalid name or limit", name)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, fmt.Sprintf("ALTER ROLE %s CONNECTION LIMIT %d", pgx.Identifier{name}.Sanitize(), roleLimit(connLimit)))
	return err
}

// Drop removes the database (ending its sessions) and its roles; what is already gone is
// not an error.
func (c Cluster) Drop(ctx context.Context, name string) error {
	if !ValidName(name) {
		return fmt.Errorf("managed: drop %q: invalid name", name)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("managed: drop database %s: %w", name, err)
	}
	if err := c.keepAccess(ctx); err != nil {
		return err
	}
	// The second login first: it is a member of the owner.
	if _, err := conn.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{SecondLogin(name)}.Sanitize()); err != nil {
		return fmt.Errorf("managed: drop role %s: %w", SecondLogin(name), err)
	}
	if c.Ceilings != nil {
		// The provisioning role owns the tablespace; the filesystem goes once it is empty.
		if err := c.Ceilings.DropCrashReserve(name); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "DROP TABLESPACE IF EXISTS "+ident); err != nil {
			return fmt.Errorf("managed: drop tablespace %s: %w", name, err)
		}
		if err := c.Ceilings.Release(name); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(ctx, "DROP ROLE IF EXISTS "+ident); err != nil {
		return fmt.Errorf("managed: drop role %s: %w", name, err)
	}
	return nil
}

// Ping checks the provisioning role can log in.
func (c Cluster) Ping(ctx context.Context) error {
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// redact keeps a password out of an error that might quote the statement.
func redact(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "[redacted]"))
}

// Size is the database's size on disk (pg_database_size).
func (c Cluster) Size(ctx context.Context, name string) (int64, error) {
	if !ValidName(name) {
		return 0, fmt.Errorf("managed: size %q: invalid name", name)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT pg_database_size($1)", name).Scan(&n); err != nil {
		return 0, fmt.Errorf("managed: size of %s: %w", name, err)
	}
	return n, nil
}

// SetReadOnly turns the database's default_transaction_read_only on or off for sessions that
// start from now on (the pooler's RECONNECT renews the ones it keeps). A transaction that
// begins with SET TRANSACTION READ WRITE may still write: the way out of being over the cap.
func (c Cluster) SetReadOnly(ctx context.Context, name string, on bool) error {
	if !ValidName(name) {
		return fmt.Errorf("managed: read-only %q: invalid name", name)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	stmt := "ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " SET default_transaction_read_only = on"
	if !on {
		stmt = "ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " RESET default_transaction_read_only"
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("managed: read-only %s: %w", name, err)
	}
	return nil
}
