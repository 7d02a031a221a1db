package config

import (
	"context"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestSigningKeyRequiredAndDefaults(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{})); err == nil {
		t.Fatal("started without GATEWAY_SIGNING_KEY")
	}
	c = Config{}
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{"GATEWAY_SIGNING_KEY": "k"})); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8104" || c.ObjectsDir() != "var/objects" {
		t.Fatalf("defaults: %+v", c)
	}
	if d := pkgconfig.Describe(&c); d["GATEWAY_SIGNING_KEY"] == "k" {
		t.Fatal("secret printed")
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"DEPLOYS_DATABASE_URL": "postgres://tori_deploys:pw@127.0.0.1:5432/tori?sslmode=disable",
		"DEPLOYS_AMQP_URL":     "amqp://tori.deploys:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
