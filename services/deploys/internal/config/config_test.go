package config

import (
	"context"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestSigningKeyRequiredAndDefaults(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, map[string]string{}); err == nil {
		t.Fatal("started without GATEWAY_SIGNING_KEY")
	}
	c = Config{}
	if err := pkgconfig.LoadMap(context.Background(), &c, map[string]string{"GATEWAY_SIGNING_KEY": "k"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8104" || c.ObjectsDir() != "var/objects" {
		t.Fatalf("defaults: %+v", c)
	}
	if d := pkgconfig.Describe(&c); d["GATEWAY_SIGNING_KEY"] == "k" {
		t.Fatal("secret printed")
	}
}
