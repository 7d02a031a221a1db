package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestDefaultsAndValidation(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, map[string]string{}); err != nil {
		t.Fatalf("defaults must be valid: %v", err)
	}
	if c.Zone != "local" || c.EdgeAddr != "127.0.0.1:8081" || c.Addr != "127.0.0.1:8107" || c.Objects() != "var/objects" {
		t.Fatalf("defaults: %+v", c)
	}
	for _, env := range []map[string]string{
		{"ZONE_ID": "logs"}, {"ZONE_ID": "Bad Zone"}, {"EDGE_ADDR": "nope"}, {"ZONE_PROCESS_MAX_FILES": "0"},
	} {
		var c Config
		err := pkgconfig.LoadMap(context.Background(), &c, env)
		if err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	if d := pkgconfig.Describe(&Config{DBPassword: "hunter2hunter2"}); strings.Contains(d["ZONEAGENT_DB_PASSWORD"], "hunter2") {
		t.Fatal("secret printed")
	}
}
