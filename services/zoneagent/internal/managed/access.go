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

// KeepAccess rebuilds the cluster's pg_hba.conf section from the catalog and has the cluster
// load it; ErrAccessUnmanaged when the file is not the zone's to keep.
func (c Cluster) KeepAccess(ctx context.Context) error {
	if c.SuperURL == "" {
		return ErrAccessUnmanaged
	}
	err := pgstore.KeepZoneHBA(ctx, c.SuperURL)
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
