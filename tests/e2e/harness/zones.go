package harness

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"tori.dev/pkg/testinfra"
)

// A two-zone stack (Options.TwoZones): the stack's own zone agent is zone eu-1, the apps
// service gives region eu to it and region us to "other", a second zone agent run beside it as
// a second machine's would be: its own data folder, edge, pooler, source trees, uid range,
// schema, broker user and provisioning role on the one managed-database cluster (each zone's
// role sees only its own databases).
//
// Both are among the zones the test broker users are made for (brokeradmin.TestZones):
// naming a new one would make every test user again on every machine.
const (
	FirstZone  = "eu-1"
	SecondZone = "other"
)

// Each zone's app uids, apart from each other and from the default range (200000 up) that
// the one-zone stacks of other test runs on this host use: two zones handing out the same
// uid would share files, processes and each other's firewall rules.
var zoneUIDBase = map[string]uint32{FirstZone: 400000, SecondZone: 450000}

const zoneUIDCount = 50000

// twoZoneSettings makes the stack's own zone the first of two and maps the regions onto them.
func twoZoneSettings(env map[string]string) {
	env["ZONE_ID"] = FirstZone
	env["ZONE_EU"] = FirstZone
	env["ZONE_US"] = SecondZone
	env["ZONE_APP_UID_BASE"] = strconv.FormatUint(uint64(zoneUIDBase[FirstZone]), 10)
	env["ZONE_APP_UID_COUNT"] = strconv.Itoa(zoneUIDCount)
}

// zoneProcess is the process name of zone's agent: "zoneagent" for the stack's own.
func zoneProcess(zone string) string { return "zoneagent-" + zone }

// startSecondZone runs the second zone's agent with what is its own laid over the stack's settings,
// and waits until it is ready (its queues bound).
func (s *Stack) startSecondZone(t testing.TB, dbURL string) {
	t.Helper()
	name := zoneProcess(SecondZone)
	own := s.zoneCredentials(t, dbURL, SecondZone)
	pooler := testinfra.FreeAddr(t)
	for k, v := range map[string]string{
		"ZONE_ID":                    SecondZone,
		"ZONEAGENT_ADDR":             testinfra.FreeAddr(t),
		"EDGE_ADDR":                  testinfra.FreeAddr(t),
		"EDGE_TLS_ADDR":              testinfra.FreeAddr(t),
		"ZONE_EDGE_HEALTH_ADDR":      testinfra.FreeAddr(t),
		"ZONE_POOLER_ADDR":           pooler,
		"ZONE_POOLER_PORT":           pooler[strings.LastIndex(pooler, ":")+1:],
		"ZONE_DATABASES_HEALTH_ADDR": testinfra.FreeAddr(t),
		"ZONE_DATABASES_DIR":         databasesDir(t),
		"DATA_DIR":                   t.TempDir(),
		"ZONE_APPS_DIR":              zoneAppsDir(t),
		"ZONE_APP_UID_BASE":          strconv.FormatUint(uint64(zoneUIDBase[SecondZone]), 10),
		"ZONE_APP_UID_COUNT":         strconv.Itoa(zoneUIDCount),
	} {
		own[k] = v
	}
	s.creds[name] = own
	s.startExtra(name, "zoneagent", own["ZONEAGENT_ADDR"])

	view := *s
	view.Env = map[string]string{}
	for k, v := range s.Env {
		view.Env[k] = v
	}
	for k, v := range own {
		if !strings.HasSuffix(k, "_URL") && !strings.HasSuffix(k, "_KEY") {
			view.Env[k] = v // its settings, not its secrets
		}
	}
	view.DataDir = own["DATA_DIR"]
	view.Edge = "http://" + own["EDGE_ADDR"]
	view.EdgeTLS = own["EDGE_TLS_ADDR"]
	s.zones = append(s.zones, &view)
}

// Zone is the stack as seen from the zone of region ("eu" or "us") on a two-zone stack: the
// same gateway and services, that zone's Edge, EdgeTLS, DataDir (its local root, its sites)
// and Env (its ZONE_ID, pooler, uid range), so every edge helper asks that zone's edge. On a
// one-zone stack every region is the stack's own zone.
func (s *Stack) Zone(region string) *Stack {
	if region == "us" && len(s.zones) > 1 {
		return s.zones[1]
	}
	return s.zones[0]
}

// databasesDir is a folder for a zone's database host, removed after the test: the host's
// user reaches it (the agent makes it that user's), which it could not under t.TempDir().
func databasesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tori-e2e-dbhost-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
