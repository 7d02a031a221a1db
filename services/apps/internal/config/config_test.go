package config_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/services/apps/internal/config"
)

func load(env map[string]string) (config.Config, error) {
	var c config.Config
	return c, pkgconfig.LoadMap(context.Background(), &c, withCredentials(env))
}

func TestDefaults(t *testing.T) {
	c, err := load(map[string]string{"GATEWAY_SIGNING_KEY": "k"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8103" || c.AppsDomain != "apps.localhost" || c.DataDir != "./var" ||
		c.VaultTransitKey != "tori-env" || c.VaultTransitMount != "transit" || c.UseVault() ||
		c.ZoneEU != "local" || c.ZoneUS != "local" || c.DomainCheckInterval != 30*time.Second ||
		strings.Join(c.Cleanup(), ",") != "logs,deploys,databases" || c.DNSResolver != "" || c.BusConfig().URL == "" {
		t.Fatalf("defaults %+v", c)
	}
	if c.DomainPendingTTL != 7*24*time.Hour || c.DomainRecheckInterval != 24*time.Hour || c.DomainMissingGrace != 72*time.Hour ||
		c.DomainMissingCheckInterval != time.Hour || c.DomainCheckParallel != 8 || c.DomainLookupTimeout != 5*time.Second {
		t.Fatalf("custom hostname defaults %+v", c)
	}
	d := pkgconfig.Describe(&c)
	if d["GATEWAY_SIGNING_KEY"] != "set" || d["VAULT_TOKEN"] != "unset" || d["APPS_AMQP_URL"] == "" {
		t.Fatalf("describe %v", d)
	}
}

func TestCleanupSet(t *testing.T) {
	for in, want := range map[string]string{"": "", "logs": "logs", "logs, deploys,databases": "logs,deploys,databases"} {
		c, err := load(map[string]string{"GATEWAY_SIGNING_KEY": "k", "APPS_CLEANUP_SERVICES": in})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(c.Cleanup(), ","); got != want {
			t.Errorf("APPS_CLEANUP_SERVICES=%q gives %q, want %q", in, got, want)
		}
	}
}

func TestValidation(t *testing.T) {
	bad := []map[string]string{
		{},
		{"GATEWAY_SIGNING_KEY": "k", "APPS_ADDR": "nope"},
		{"GATEWAY_SIGNING_KEY": "k", "VAULT_ADDR": "http://127.0.0.1:8200"},
		{"GATEWAY_SIGNING_KEY": "k", "DNS_RESOLVER": "8.8.8.8"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_CHECK_INTERVAL": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_PENDING_TTL": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_RECHECK_INTERVAL": "-1h"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_MISSING_CHECK_INTERVAL": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_MISSING_GRACE": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_LOOKUP_TIMEOUT": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "DOMAIN_CHECK_PARALLEL": "0"},
		{"GATEWAY_SIGNING_KEY": "k", "APPS_SHUTDOWN_TIMEOUT": "0s"},
		{"GATEWAY_SIGNING_KEY": "k", "APPS_DOMAIN": "https://apps.example.com"},
		{"GATEWAY_SIGNING_KEY": "k", "APPS_CLEANUP_SERVICES": "logs.app"},
		{"GATEWAY_SIGNING_KEY": "k", "BUS_QUEUE_TYPE": "lazy"},
	}
	for _, env := range bad {
		if _, err := load(env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	if _, err := load(map[string]string{"GATEWAY_SIGNING_KEY": "k", "VAULT_ADDR": "http://127.0.0.1:8200", "VAULT_TOKEN": "t", "DNS_RESOLVER": "127.0.0.1:53"}); err != nil {
		t.Fatal(err)
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"APPS_DATABASE_URL": "postgres://tori_apps:pw@127.0.0.1:5432/tori?sslmode=disable",
		"APPS_AMQP_URL":     "amqp://tori.apps:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
