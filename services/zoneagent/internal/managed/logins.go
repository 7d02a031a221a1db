package managed

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A database's logins. Rotating a password must let the old one work on for a while (until
// the app's next deploy is live, or 24 hours), and a Postgres role has one password, so a
// database has two logins that take turns: its owner role itself (<name>, the only login
// before the first rotation, which owns the database and everything made in it) and
// <name>_b, a member of the owner that starts every session as the owner (ALTER ROLE … SET
// role), so what it makes is the owner's too. The one not in DATABASE_URL is NOLOGIN (and
// out of the pooler's auth file) once its password has stopped working; the owner being
// NOLOGIN changes nothing it owns.

// SecondLogin is the login that takes turns with database name's owner role.
func SecondLogin(name string) string { return name + "_b" }

// OtherLogin is the login a rotation moves to from current.
func OtherLogin(name, current string) string {
	if current == name || current == "" {
		return SecondLogin(name)
	}
	return name
}

// ValidLogin reports whether login is one of database name's two logins.
func ValidLogin(name, login string) bool {
	return ValidName(name) && (login == name || login == SecondLogin(name))
}

// SetLogin makes login (one of database name's two) log in with password, holding at most
// connLimit sessions and the zone's one (pg_hba.conf already names both logins); the second login is made the first time, a member of the owner that
// acts as it. The database must exist. Run again, it ends the same.
func (c Cluster) SetLogin(ctx context.Context, name, login, password string, connLimit int) error {
	if !ValidLogin(name, login) || password == "" || connLimit < 1 {
		return fmt.Errorf("managed: login %q: invalid name, password or limit", login)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	owner, ident := pgx.Identifier{name}.Sanitize(), pgx.Identifier{login}.Sanitize()
	var stmts []string
	if login != name {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", login).Scan(&exists); err != nil {
			return fmt.Errorf("managed: look up %s: %w", login, err)
		}
		if !exists {
			if _, err := conn.Exec(ctx, "CREATE ROLE "+ident+" NOLOGIN"); err != nil && !isCode(err, "42710") {
				return fmt.Errorf("managed: create role %s: %w", login, err)
			}
		}
		// The provisioning role is not made a member of it: CREATEROLE drops it and
		// pg_signal_backend ends its sessions.
		stmts = append(stmts,
			"GRANT "+owner+" TO "+ident,
			"ALTER ROLE "+ident+" SET role = "+quoteLiteral(name),
			"GRANT CONNECT, TEMPORARY ON DATABASE "+owner+" TO "+ident,
		)
	}
	stmts = append(stmts,
		fmt.Sprintf("ALTER ROLE %s SET statement_timeout = %s", ident, quoteLiteral(fmt.Sprintf("%dms", c.StatementTimeout.Milliseconds()))),
		"ALTER ROLE "+ident+" LOGIN"+fmt.Sprintf(" CONNECTION LIMIT %d PASSWORD %s", roleLimit(connLimit), quoteLiteral(password)),
	)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("managed: set up login %s: %w", login, redact(err, password))
		}
	}
	return nil
}

// Retire stops login (one of database name's two) from logging in and ends its sessions:
// its password stops working. What is already retired or gone is not an error.
func (c Cluster) Retire(ctx context.Context, name, login string) error {
	if !ValidLogin(name, login) {
		return fmt.Errorf("managed: retire %q: invalid login", login)
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", login).Scan(&exists); err != nil {
		return fmt.Errorf("managed: look up %s: %w", login, err)
	}
	if !exists {
		return nil
	}
	ident := pgx.Identifier{login}.Sanitize()
	// Its password goes too, so nothing that later sets LOGIN again revives the old one.
	if _, err := conn.Exec(ctx, "ALTER ROLE "+ident+" NOLOGIN PASSWORD NULL"); err != nil {
		return fmt.Errorf("managed: retire %s: %w", login, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", login); err != nil {
		return fmt.Errorf("managed: end the sessions of %s: %w", login, err)
	}
	return nil
}
