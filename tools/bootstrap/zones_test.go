package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A machine running two zones (make run ZONES=2): each agent's file is its own, with a
// schema and role, a broker user, a provisioning role on the zone cluster, a certificate key
// and a bucket of its zone's, and nothing of the other's. Offline, so nothing is reached.
func TestEachZoneOfAMachineHasCredentialsOfItsOwn(t *testing.T) {
	s := loadSettings()
	s.DataDir, s.Zone, s.ExtraZones = t.TempDir(), "local", []string{"us"}
	s.Broker, s.Offline = "definitions", true
	s.ZoneSuperDB = "postgres://postgres@zone-postgres.invalid:5432/postgres" // never reached
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	if err := bootstrap(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	read := func(name string) map[string]string {
		t.Helper()
		f, err := readEnvFile(filepath.Join(s.DataDir, "secrets", name+".env"))
		if err != nil || len(f) == 0 {
			t.Fatalf("%s.env: %v %v", name, f, err)
		}
		return f
	}
	user := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			t.Fatalf("not a URL with a user: %q", raw)
		}
		return u.User.Username()
	}
	for zone, file := range map[string]string{"local": "zoneagent", "us": "zoneagent-us"} {
		f := read(file)
		z := strings.ReplaceAll(zone, "-", "_")
		if got := user(f["ZONEAGENT_DATABASE_URL"]); got != "tori_zoneagent_"+z {
			t.Errorf("%s: database role %s", file, got)
		}
		if got := user(f["ZONE_POSTGRES_ADMIN_URL"]); got != "tori_provisioner_"+z {
			t.Errorf("%s: provisioning role %s", file, got)
		}
		if got := user(f["ZONEAGENT_AMQP_URL"]); got != "tori.zone."+zone {
			t.Errorf("%s: broker user %s", file, got)
		}
		if f["ZONEAGENT_OBJECT_STORE_BUCKET"] != "tori-zone-"+zone || f["ZONE_TLS_STORAGE_KEY"] == "" {
			t.Errorf("%s: bucket %q, certificate key set %v", file, f["ZONEAGENT_OBJECT_STORE_BUCKET"], f["ZONE_TLS_STORAGE_KEY"] != "")
		}
	}
	a, b := read("zoneagent"), read("zoneagent-us")
	for k, v := range a {
		if strings.Contains(k, "URL") && k != "OBJECT_STORE_URL" || strings.HasSuffix(k, "_KEY") {
			if b[k] == v {
				t.Errorf("both zones have the same %s", k)
			}
		}
	}
	// Both zones' broker users are in the definitions the broker loads.
	raw, err := os.ReadFile(filepath.Join(s.DataDir, "secrets", "rabbitmq-definitions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var defs struct {
		Users []struct{ Name string } `json:"users"`
	}
	json.Unmarshal(raw, &defs)
	found := map[string]bool{}
	for _, u := range defs.Users {
		found[u.Name] = true
	}
	if !found["tori.zone.local"] || !found["tori.zone.us"] {
		t.Fatalf("definitions' users: %v", defs.Users)
	}

	for _, bad := range [][]string{{"local"}, {"US"}, {"us", "us"}} {
		s.ExtraZones = bad
		if err := bootstrap(context.Background(), s); err == nil || !strings.Contains(err.Error(), "EXTRA_ZONE_IDS") {
			t.Errorf("EXTRA_ZONE_IDS=%v: %v", bad, err)
		}
	}
}
