package main

import (
	"slices"
	"testing"
)

// The database host gets its own settings from the agent's environment and nothing else:
// not the certificate key, not another service's secrets, not the sandbox's settings.
func TestDatabaseHostGetsItsSettingsAlone(t *testing.T) {
	env := map[string]string{
		"PATH": "/usr/bin", "LOG_LEVEL": "debug", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"ZONE_ID": "local", "ZONEAGENT_DATABASE_URL": "postgres://z@127.0.0.1/z", "ZONEAGENT_AMQP_URL": "amqp://z@127.0.0.1/",
		"ZONE_POSTGRES_ADMIN_URL": "postgres://prov:pw@127.0.0.1:5433/postgres", "ZONE_DATABASES_USER": "tori-dbhost",
		"ZONEAGENT_OBJECT_STORE_SECRET_KEY": "s", "BUS_NAMESPACE": "t.",
		"ZONE_TLS_STORAGE_KEY": "sealed", "GATEWAY_SIGNING_KEY": "k", "ZONE_BWRAP": "bwrap", "EDGE_ADDR": "127.0.0.1:8081",
	}
	got := hostEnviron(env)
	for _, want := range []string{"PATH", "LOG_LEVEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "ZONE_ID", "ZONEAGENT_DATABASE_URL", "ZONEAGENT_AMQP_URL",
		"ZONE_POSTGRES_ADMIN_URL", "ZONE_DATABASES_USER", "ZONEAGENT_OBJECT_STORE_SECRET_KEY", "BUS_NAMESPACE"} {
		if !slices.Contains(got, want+"="+env[want]) {
			t.Errorf("the host lacks %s", want)
		}
	}
	for _, kept := range []string{"ZONE_TLS_STORAGE_KEY", "GATEWAY_SIGNING_KEY", "ZONE_BWRAP", "EDGE_ADDR"} {
		if slices.Contains(got, kept+"="+env[kept]) {
			t.Errorf("the host was given %s", kept)
		}
	}
}
