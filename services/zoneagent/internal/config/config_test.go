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
	if c.Zone != "local" || c.EdgeAddr != "127.0.0.1:8081" || c.Addr != "127.0.0.1:8107" || c.Objects() != "var/objects" {
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
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"ZONEAGENT_DATABASE_URL": "postgres://tori_zoneagent:pw@127.0.0.1:5432/tori?sslmode=disable",
		"ZONEAGENT_AMQP_URL":     "amqp://tori.zoneagent:pw@127.0.0.1:5672/",
		"ZONE_TLS_STORAGE_KEY":   testStorageKey,
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
