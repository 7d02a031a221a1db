package config

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type sample struct {
	Addr     string `env:"ADDR, default=127.0.0.1:9000"`
	DBURL    string `env:"DB_URL, default=postgres://u:hunter2@h/db"`
	Key      string `env:"SIGNING_KEY" secret:"true"`
	Optional string `env:"OPTIONAL_KEY" secret:"true"`
}

func (s *sample) Validate() error {
	if s.Key == "" {
		return errors.New("SIGNING_KEY is required")
	}
	return nil
}

func TestLoadAppliesDefaultsAndValidates(t *testing.T) {
	var cfg sample
	err := LoadMap(context.Background(), &cfg, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "SIGNING_KEY is required") {
		t.Fatalf("want validation error, got %v", err)
	}
	cfg = sample{}
	if err := LoadMap(context.Background(), &cfg, map[string]string{"SIGNING_KEY": "s3cret-value"}); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9000" || cfg.Key != "s3cret-value" {
		t.Fatalf("unexpected config %+v", cfg)
	}
}

func TestDescribeNeverPrintsSecrets(t *testing.T) {
	cfg := sample{Addr: "a", DBURL: "postgres://u:hunter2@h/db", Key: "s3cret-value"}
	d := Describe(&cfg)
	for k, v := range d {
		if strings.Contains(v, "s3cret") || strings.Contains(v, "hunter2") {
			t.Fatalf("%s leaks a secret: %q", k, v)
		}
	}
	if d["SIGNING_KEY"] != "set" || d["OPTIONAL_KEY"] != "unset" || d["ADDR"] != "a" {
		t.Fatalf("unexpected description %v", d)
	}
}
