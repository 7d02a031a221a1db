package config

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgconfig "tori.dev/pkg/config"
)

func TestDefaultsAndRequiredKey(t *testing.T) {
	var cfg Config
	err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(map[string]string{}))
	if err == nil || !strings.Contains(err.Error(), "GATEWAY_SIGNING_KEY is required") {
		t.Fatalf("want the signing key required, got %v", err)
	}
	cfg = Config{}
	if err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(map[string]string{"GATEWAY_SIGNING_KEY": "k3y-value"})); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:8105" || cfg.MaxRetentionDays != 30 || cfg.ShutdownTimeout != 10*time.Second || cfg.BusConfig().URL == "" {
		t.Fatalf("defaults: %+v", cfg)
	}
	for name, v := range pkgconfig.Describe(&cfg) {
		if strings.Contains(v, "k3y-value") || strings.Contains(v, "pa55") {
			t.Fatalf("%s leaks a secret", name)
		}
	}
}

func TestValidateRefusesNonsense(t *testing.T) {
	for _, env := range []map[string]string{
		{"LOG_MAX_RETENTION_DAYS": "0"},
		{"LOGS_SHUTDOWN_TIMEOUT": "0s"},
		{"LOGS_INGEST_PREFETCH": "0"},
		{"LOGS_CLEANUP_INTERVAL": "0s"},
		{"LOGS_PARTITIONS_AHEAD": "-1"},
		{"PROFILE_ADDR": "0.0.0.0:6060"},
		{"LOGS_DRAIN_TEST_HOST": "127.0.0.1:9443"},
		{"LOGS_DRAIN_TEST_CA": "/tmp/ca.pem"},
		{"LOGS_DRAIN_TEST_HOST": "127.0.0.1", "LOGS_DRAIN_TEST_CA": "/tmp/ca.pem"},
		{"LOGS_DRAIN_BACKLOG": "0"},
		{"LOGS_DRAIN_LEASE": "0s"},
	} {
		env["GATEWAY_SIGNING_KEY"] = "k"
		var cfg Config
		if err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(env)); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"LOGS_DATABASE_URL": "postgres://tori_logs:pw@127.0.0.1:5432/tori?sslmode=disable",
		"LOGS_AMQP_URL":     "amqp://tori.logs:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
