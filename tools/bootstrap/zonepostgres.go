package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"tori.dev/pkg/pgstore"
)

// zonePostgresVar is the zone agent's provisioning URL on the zone's own cluster; only the
// zone agent's file holds it, and no service ever sees the cluster's superuser.
const zonePostgresVar = "ZONE_POSTGRES_ADMIN_URL"

// ensureZoneProvisioner makes (or keeps) the zone's provisioning role on the zone cluster
// with the password already in the zone agent's file, or a new one, and records its URL
// there. Given in the environment, the variable is left to whoever set it.
func ensureZoneProvisioner(ctx context.Context, s settings, file map[string]string) error {
	if os.Getenv(zonePostgresVar) != "" {
		delete(file, zonePostgresVar)
		return nil
	}
	p := pgstore.Provisioner{
		Role:     "tori_provisioner_" + strings.ReplaceAll(s.Zone, "-", "_"),
		Password: passwordIn(file[zonePostgresVar]),
		Addr:     s.ZonePostgresAddr,
	}
	if p.Password == "" {
		p.Password = newPassword()
	}
	// Offline, or where the zone's cluster is not this bootstrap's to reach (Kubernetes: the
	// zone runs on its own machines), only the URL is made.
	if !s.Offline && s.ZoneSuperDB != "none" {
		if err := pgstore.EnsureProvisioner(ctx, s.ZoneSuperDB, p); err != nil {
			return fmt.Errorf("zone postgres (scripts/zone-postgres.sh makes the cluster): %w", err)
		}
	}
	u, err := pgstore.ProvisionerURL(p)
	if err != nil {
		return err
	}
	file[zonePostgresVar] = u
	return nil
}
