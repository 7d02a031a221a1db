package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrSuperuser is returned by Connect when the URL it was handed logs in as a superuser (or a
// role that may create roles or databases): a service runs with its own role only, made by
// the bootstrap.
var ErrSuperuser = errors.New("pgstore: refusing to run as a privileged role")

// Connect is the start-up of a service: it opens a pool on url (the service's own role,
// written by bin/bootstrap), refuses a role that could reach beyond its schema, and runs the
// service's migrations in schema as that role. Nothing here creates a database or a role.
func Connect(ctx context.Context, url, schema string, opts ...Option) (*pgxpool.Pool, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	pool, err := open(ctx, url, o)
	if err != nil {
		return nil, err
	}
	if err := RefusePrivileged(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := Migrate(ctx, pool, schema, o.sets...); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// RefusePrivileged fails with ErrSuperuser when the connected role is a superuser or may
// create roles or databases: such a URL is an admin URL, meant for the bootstrap alone.
func RefusePrivileged(ctx context.Context, pool *pgxpool.Pool) error {
	var role string
	var super, createRole, createDB bool
	err := pool.QueryRow(ctx,
		`SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user`).
		Scan(&role, &super, &createRole, &createDB)
	if err != nil {
		return fmt.Errorf("pgstore: look up the connected role: %w", err)
	}
	if super || createRole || createDB {
		return fmt.Errorf("%w: %q is a superuser or may create roles or databases; "+
			"give the service its own role (bin/bootstrap writes <NAME>_DATABASE_URL to DATA_DIR/secrets/<name>.env)",
			ErrSuperuser, role)
	}
	return nil
}
