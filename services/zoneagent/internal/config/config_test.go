package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestDefaultsAndValidation(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{})); err != nil {
		t.Fatalf("defaults must be valid: %v", err)
	}
	if c.Zone != "local" || c.EdgeAddr != "127.0.0.1:8081" || c.Addr != "127.0.0.1:8107" {
		t.Fatalf("defaults: %+v", c)
	}
	for _, env := range []map[string]string{
		{"ZONE_ID": "logs"}, {"ZONE_ID": "Bad Zone"}, {"EDGE_ADDR": "nope"}, {"ZONE_PROCESS_MAX_FILES": "0"},
		// The tests' registry name must be one DNS never answers, and come with its certificate.
		{"ZONE_TEST_REGISTRY_HOST": "ghcr.io", "ZONE_TEST_REGISTRY_CA": "/tmp/ca.pem"},
		{"ZONE_TEST_REGISTRY_HOST": "registry.test"},
	} {
		var c Config
		err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(env))
		if err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	var tests Config
	if err := pkgconfig.LoadMap(context.Background(), &tests, withCredentials(map[string]string{
		"ZONE_TEST_REGISTRY_HOST": "registry.test", "ZONE_TEST_REGISTRY_CA": "/tmp/ca.pem"})); err != nil {
		t.Fatalf("a .test registry with its certificate: %v", err)
	}
	if d := pkgconfig.Describe(&Config{DatabaseURL: "postgres://z:hunter2hunter2@h/db"}); strings.Contains(d["ZONEAGENT_DATABASE_URL"], "hunter2") {
		t.Fatal("secret printed")
	}
	if d := pkgconfig.Describe(&c); strings.Contains(d["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], "hunter2") {
		t.Fatal("the object store's secret is printed")
	}
	if c.EdgeCacheDir() != "var/edge-cache" || c.CacheBytes != 1<<30 {
		t.Fatalf("edge cache defaults: %q %d", c.EdgeCacheDir(), c.CacheBytes)
	}
	// The zone's sites need its bucket: no part of its way in may be missing.
	for _, v := range []string{"OBJECT_STORE_URL", "ZONEAGENT_OBJECT_STORE_ACCESS_KEY", "ZONEAGENT_OBJECT_STORE_SECRET_KEY", "ZONEAGENT_OBJECT_STORE_BUCKET"} {
		env := withCredentials(map[string]string{"EDGE_CACHE_BYTES": "1048576"})
		delete(env, v)
		var c Config
		if err := pkgconfig.LoadMap(context.Background(), &c, env); err == nil {
			t.Errorf("accepted without %s", v)
		}
	}
	var small Config
	if err := pkgconfig.LoadMap(context.Background(), &small, withCredentials(map[string]string{"EDGE_CACHE_BYTES": "1000"})); err == nil {
		t.Error("a cache of 1000 bytes accepted")
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"ZONEAGENT_DATABASE_URL": "postgres://tori_zoneagent:pw@127.0.0.1:5432/tori?sslmode=disable",
		"ZONEAGENT_AMQP_URL":     "amqp://tori.zoneagent:pw@127.0.0.1:5672/",
		"ZONE_TLS_STORAGE_KEY":   testStorageKey,
		// The zone's account and bucket in the object store (its sites).
		"OBJECT_STORE_URL":                  "http://127.0.0.1:7070",
		"ZONEAGENT_OBJECT_STORE_ACCESS_KEY": "tori-zone-local",
		"ZONEAGENT_OBJECT_STORE_SECRET_KEY": "hunter2hunter2",
		"ZONEAGENT_OBJECT_STORE_BUCKET":     "tori-zone-local",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// ZONE_SANDBOX_RESOLVERS is a list of IP or IP:port (53 by default), the upstreams of the
// zone's DNS relay; anything else stops the agent at start.
func TestSandboxResolvers(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{"ZONE_SANDBOX_RESOLVERS": "9.9.9.9, 127.0.0.1:5353,2001:db8::53"})); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.SandboxResolverAddrs(), " "); got != "9.9.9.9:53 127.0.0.1:5353 [2001:db8::53]:53" {
		t.Errorf("upstreams %q", got)
	}
	for _, bad := range []string{"dns.example", "9.9.9.9:0", "fe80::1%eth0", "10.0.0.1:dns"} {
		var c Config
		if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{"ZONE_SANDBOX_RESOLVERS": bad})); err == nil || !strings.Contains(err.Error(), "ZONE_SANDBOX_RESOLVERS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var none Config
	if err := pkgconfig.LoadMap(context.Background(), &none, withCredentials(map[string]string{})); err != nil || none.SandboxResolverAddrs() != nil {
		t.Errorf("unset: %v %v", none.SandboxResolverAddrs(), err)
	}
}
