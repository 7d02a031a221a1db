package config

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgconfig "tori.dev/pkg/config"
)

func TestDefaults(t *testing.T) {
	var cfg Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(map[string]string{"GATEWAY_SIGNING_KEY": "k"})); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:8102" {
		t.Errorf("Addr %q", cfg.Addr)
	}
	if cfg.DatabaseURL != "postgres://tori_billing:pw@127.0.0.1:5432/tori?sslmode=disable" {
		t.Errorf("DatabaseURL %q", cfg.DatabaseURL)
	}
	if cfg.ShutdownTimeout != 10*time.Second {
		t.Errorf("ShutdownTimeout %v", cfg.ShutdownTimeout)
	}
	// The bus settings come through the embedded bus.Config.
	if cfg.BusConfig().URL != "amqp://tori.billing:pw@127.0.0.1:5672/" || cfg.QueueType != "quorum" || cfg.MaxAttempts != 5 {
		t.Errorf("bus config %+v", cfg.Config)
	}
}

func TestValidateRejects(t *testing.T) {
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"no signing key":   {map[string]string{}, "GATEWAY_SIGNING_KEY is required"},
		"bad address":      {map[string]string{"GATEWAY_SIGNING_KEY": "k", "BILLING_ADDR": "8102"}, "BILLING_ADDR"},
		"bad database url": {map[string]string{"GATEWAY_SIGNING_KEY": "k", "BILLING_DATABASE_URL": "mysql://x/y"}, "BILLING_DATABASE_URL"},
		"bad queue type":   {map[string]string{"GATEWAY_SIGNING_KEY": "k", "BUS_QUEUE_TYPE": "lazy"}, "BUS_QUEUE_TYPE"},
		"no shutdown time": {map[string]string{"GATEWAY_SIGNING_KEY": "k", "BILLING_SHUTDOWN_TIMEOUT": "0s"}, "BILLING_SHUTDOWN_TIMEOUT"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var cfg Config
			err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestOperatorCommandsNeedNoSigningKey(t *testing.T) {
	var infra Infra
	if err := pkgconfig.LoadMap(context.Background(), &infra, withCredentials(map[string]string{})); err != nil {
		t.Fatalf("infra config without a signing key: %v", err)
	}
}

func TestDescribeHidesSecrets(t *testing.T) {
	cfg := Config{SigningKey: "sekrit-key", Infra: Infra{DatabaseURL: "postgres://u:pw-sekrit@h/db", AMQPURL: "amqp://tori.billing:sekrit-amqp@h/"}}
	for k, v := range pkgconfig.Describe(&cfg) {
		if strings.Contains(v, "sekrit") {
			t.Errorf("%s=%s leaks a secret", k, v)
		}
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"BILLING_DATABASE_URL": "postgres://tori_billing:pw@127.0.0.1:5432/tori?sslmode=disable",
		"BILLING_AMQP_URL":     "amqp://tori.billing:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
