// Package pgstore is the Postgres plumbing every service shares: creating the database,
// giving each service its own schema and login role, running embedded migrations under an
// advisory lock, and running work in transactions.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Service names one service's schema and the role that owns it.
type Service struct {
	Schema   string // e.g. "identity"
	Role     string // e.g. "tori_identity"
	Password string // optional; empty leaves authentication to the server (trust, peer, cert)
}

var identRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func (s Service) validate() error {
	if !identRe.MatchString(s.Schema) || !identRe.MatchString(s.Role) {
		return fmt.Errorf("pgstore: schema %q and role %q must be lower-case identifiers", s.Schema, s.Role)
	}
	return nil
}

// EnsureDatabase creates the database adminURL names when it does not exist. adminURL must
// name a role allowed to create databases.
func EnsureDatabase(ctx context.Context, adminURL string) error {
	u, err := url.Parse(adminURL)
	if err != nil {
		return fmt.Errorf("pgstore: parse database url: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return errors.New("pgstore: database url names no database")
	}
	conn, err := pgx.Connect(ctx, withDatabase(adminURL, "postgres"))
	if err != nil {
		return fmt.Errorf("pgstore: connect to maintenance database: %w", err)
	}
	defer conn.Close(ctx)
	// Every service of `make run` starts at once against a database that may not exist yet;
	// CREATE DATABASE races surface as unique violations, so creators take turns.
	unlock, err := advisoryLock(ctx, conn, "tori.pgstore.databases")
	if err != nil {
		return err
	}
	defer unlock()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("pgstore: look up database: %w", err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if isCode(err, "42P04") || isCode(err, "23505") { // created by a process that does not lock
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgstore: create database: %w", err)
	}
	return nil
}

// EnsureService creates svc's role and schema in the database adminURL names, and makes the
// schema the role's only reachable one: it owns its schema, has no rights on any other, and
// its search_path points at its own.
func EnsureService(ctx context.Context, adminURL string, svc Service) error {
	if err := svc.validate(); err != nil {
		return err
	}
	if err := ensureRole(ctx, adminURL, svc); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Close(ctx)
	unlock, err := advisoryLock(ctx, conn, "tori.pgstore.schemas")
	if err != nil {
		return err
	}
	defer unlock()
	role := pgx.Identifier{svc.Role}.Sanitize()
	schema := pgx.Identifier{svc.Schema}.Sanitize()
	stmts := []string{
		"CREATE SCHEMA IF NOT EXISTS " + schema + " AUTHORIZATION " + role,
		"ALTER SCHEMA " + schema + " OWNER TO " + role,
		// Nothing of anyone's may be created in public, and no service keeps data there.
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("pgstore: %s: %w", s, err)
		}
	}
	return nil
}

// ensureRole creates the role and sets its password and search path. Roles belong to the
// whole server while advisory locks belong to one database, so the lock is taken in the
// maintenance database that every bootstrap of this server shares, whichever database it
// is setting up.
func ensureRole(ctx context.Context, adminURL string, svc Service) error {
	conn, err := pgx.Connect(ctx, withDatabase(adminURL, "postgres"))
	if err != nil {
		// Some hosted servers forbid the maintenance database; lock in our own instead.
		if conn, err = pgx.Connect(ctx, adminURL); err != nil {
			return fmt.Errorf("pgstore: connect: %w", err)
		}
	}
	defer conn.Close(ctx)
	unlock, err := advisoryLock(ctx, conn, "tori.pgstore.roles")
	if err != nil {
		return err
	}
	defer unlock()

	role := pgx.Identifier{svc.Role}.Sanitize()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, svc.Role).Scan(&exists); err != nil {
		return fmt.Errorf("pgstore: look up role: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"); err != nil && !isCode(err, "42710") {
			return fmt.Errorf("pgstore: create role: %w", err)
		}
	}
	if svc.Password != "" {
		if _, err := conn.Exec(ctx, "ALTER ROLE "+role+" PASSWORD "+quoteLiteral(svc.Password)); err != nil {
			return fmt.Errorf("pgstore: set role password: %w", err)
		}
	}
	// Skipping an unchanged setting keeps concurrent bootstraps from rewriting the same row.
	var current []string
	if err := conn.QueryRow(ctx, `SELECT coalesce(setconfig, '{}') FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole WHERE r.rolname = $1 AND s.setdatabase = 0`, svc.Role).Scan(&current); err != nil && err != pgx.ErrNoRows {
		return fmt.Errorf("pgstore: read role settings: %w", err)
	}
	want := "search_path=" + svc.Schema
	for _, c := range current {
		if c == want {
			return nil
		}
	}
	if _, err := conn.Exec(ctx, "ALTER ROLE "+role+" SET search_path = "+pgx.Identifier{svc.Schema}.Sanitize()); err != nil {
		return fmt.Errorf("pgstore: set search path: %w", err)
	}
	return nil
}

func advisoryLock(ctx context.Context, conn *pgx.Conn, key string) (func(), error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, key); err != nil {
		return nil, fmt.Errorf("pgstore: lock %s: %w", key, err)
	}
	return func() {
		conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, key)
	}, nil
}

func withDatabase(rawURL, db string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.Path = "/" + db
	return u.String()
}

// ServiceURL rewrites adminURL to connect as svc's role with svc's schema as search path.
func ServiceURL(adminURL string, svc Service) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", fmt.Errorf("pgstore: parse database url: %w", err)
	}
	if svc.Password != "" {
		u.User = url.UserPassword(svc.Role, svc.Password)
	} else {
		u.User = url.User(svc.Role)
	}
	q := u.Query()
	q.Set("search_path", svc.Schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// IsUniqueViolation reports whether err is a unique-constraint violation, optionally of the
// named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return constraint == "" || pe.ConstraintName == constraint
}
