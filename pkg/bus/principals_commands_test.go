package bus_test

import (
	"regexp"
	"testing"

	"tori.dev/pkg/bus"
)

// Each zone command has one sender, the zone's events are the zone's, and the broker's topic
// permission agrees with MayPublish on every one of them.
func TestZoneCommandsAndEventsHaveOneOwner(t *testing.T) {
	zone := bus.ZonePrincipal("local")
	for _, tc := range []struct {
		key   string
		owner string
	}{
		{"zone.local.deploy", bus.PrincipalDeploys},
		{"zone.local.activate", bus.PrincipalDeploys},
		{"zone.local.discard", bus.PrincipalDeploys},
		{"zone.local.formation", bus.PrincipalDeploys},
		{"zone.local.cron_run", bus.PrincipalDeploys},
		{"zone.local.cron_cancel", bus.PrincipalDeploys},
		{"zone.app.formation_changed", zone},
		{"zone.local.database_create", bus.PrincipalDatabases},
		{"zone.local.database_drop", bus.PrincipalDatabases},
		{"zone.local.database_dump", bus.PrincipalDatabases},
		{"zone.local.database_restore", bus.PrincipalDatabases},
		{"zone.local.database_rotate", bus.PrincipalDatabases},
		{"zone.local.database_retire", bus.PrincipalDatabases},
		{"zone.database.rotated", zone},
		{"zone.database.restored", zone},
		{"zone.database.dumped", zone},
		{"zone.database.ready", zone},
		{"zone.database.failed", zone},
		{"zone.database.dropped", zone},
		{"zone.deploy.progressed", zone},
		{"zone.app.certificate_changed", zone},
		{"databases.database.ready", bus.PrincipalDatabases},
	} {
		for _, p := range []string{bus.PrincipalDeploys, bus.PrincipalDatabases, bus.PrincipalApps, zone} {
			want := p == tc.owner
			if got := bus.MayPublish(p, tc.key); got != want {
				t.Errorf("MayPublish(%s, %s) = %v, want %v", p, tc.key, got, want)
			}
			if got := regexp.MustCompile(bus.TopicWrite(p)).MatchString(tc.key); got != want {
				t.Errorf("TopicWrite(%s) matches %s: %v, want %v", p, tc.key, got, want)
			}
		}
	}
}

// The apps service may bind to the zones' certificate reports (it keeps them on the domain).
func TestAppsHearCertificateReports(t *testing.T) {
	if !regexp.MustCompile(bus.TopicRead(bus.PrincipalApps)).MatchString("zone.app.certificate_changed") {
		t.Fatal("apps may not bind zone.app.certificate_changed")
	}
}
