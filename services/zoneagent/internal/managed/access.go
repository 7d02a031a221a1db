package managed

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/pkg/pgstore"
)

// One login reaches one database: the cluster's pg_hba.conf names, for each managed
// database, its two logins alone (pkg/pgstore/zonehba.go), so a login that gained another
// database's role somewhere still cannot connect to that database. The zone rebuilds that
// section from the catalog after every database it makes or drops and at its start; the
// second login need not wait for a rotation, its name is on the line from the start.

// ErrAccessUnmanaged: the cluster's pg_hba.conf is not the zone's to keep (no zone section,
// or not this host's file); its operator must hold each login to its database.
var ErrAccessUnmanaged = errors.New("managed: the zone cluster's pg_hba.conf is not kept by the zone")

// AccessKeeper rebuilds the cluster's pg_hba.conf section from the catalog and has the
// cluster load it; ErrAccessUnmanaged when the file is not the zone's to keep.
type AccessKeeper interface {
	KeepAccess(ctx context.Context) error
}

// KeepAccess rebuilds the cluster's pg_hba.conf section (Access); ErrAccessUnmanaged without
// one.
func (c Cluster) KeepAccess(ctx context.Context) error {
	if c.Access == nil {
		return ErrAccessUnmanaged
	}
	return c.Access.KeepAccess(ctx)
}

// HBAKeeper keeps the section as the cluster's superuser over its Unix socket (SuperURL: peer,
// as root on the cluster's host; pkg/pgstore/zonehba.go): the root helper's step.
type HBAKeeper struct{ SuperURL string }

// KeepAccess rebuilds the section and has the cluster load it.
func (h HBAKeeper) KeepAccess(ctx context.Context) error {
	err := pgstore.KeepZoneHBA(ctx, h.SuperURL)
	if errors.Is(err, pgstore.ErrZoneHBAUnmanaged) || errors.Is(err, pgstore.ErrZoneHBANotLocal) {
		return fmt.Errorf("%w: %v", ErrAccessUnmanaged, err)
	}
	if err != nil {
		return fmt.Errorf("managed: keep the cluster's pg_hba.conf: %w", err)
	}
	return nil
}

// keepAccess is KeepAccess after a change, where a file that is not the zone's (said at the
// agent's start) is no error.
func (c Cluster) keepAccess(ctx context.Context) error {
	if err := c.KeepAccess(ctx); err != nil && !errors.Is(err, ErrAccessUnmanaged) {
		return err
	}
	return nil
}

// ErrSuperuserProvisioner: ZONE_POSTGRES_ADMIN_URL logs in as a superuser of the cluster,
// which the database host must never be.
var ErrSuperuserProvisioner = errors.New("managed: ZONE_POSTGRES_ADMIN_URL is a superuser of the zone cluster; it must be the provisioning role (LOGIN CREATEDB CREATEROLE, bin/bootstrap makes it)")

// RefuseSuperuser is ErrSuperuserProvisioner when the provisioning role is a superuser.
func (c Cluster) RefuseSuperuser(ctx context.Context) error {
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var super bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil {
		return fmt.Errorf("managed: is the provisioning role a superuser: %w", err)
	}
	if super {
		return ErrSuperuserProvisioner
	}
	return nil
}
