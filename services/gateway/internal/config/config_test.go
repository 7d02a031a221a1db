package config

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgconfig "tori.dev/pkg/config"
)

const key = "0123456789abcdef0123456789abcdef"

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	var c Config
	err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(env))
	return c, err
}

func TestDefaults(t *testing.T) {
	c, err := load(t, map[string]string{"GATEWAY_SIGNING_KEY": key})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.IdentityURL != "http://127.0.0.1:8101" || c.DatabasesURL != "http://127.0.0.1:8106" {
		t.Fatalf("addresses %+v", c)
	}
	if c.AuthLimitPer15Min != 20 || c.TokenCacheTTL != 30*time.Second {
		t.Fatalf("limits %d %s", c.AuthLimitPer15Min, c.TokenCacheTTL)
	}
	if c.ShutdownTimeout != 10*time.Second {
		t.Fatalf("shutdown timeout %s", c.ShutdownTimeout)
	}
	want := []string{"http://127.0.0.1:5173", "http://127.0.0.1:5174", "http://127.0.0.1:5175"}
	if got := c.AllowedOrigins(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("origins %v", got)
	}
	if c.BusConfig().URL == "" || c.QueueType != "quorum" {
		t.Fatalf("bus config not loaded: %+v", c.Config)
	}
}

func TestOriginsAndProxies(t *testing.T) {
	c, err := load(t, map[string]string{
		"GATEWAY_SIGNING_KEY": key,
		"CORS_ORIGINS":        "https://console.tori.dev, https://Docs.Tori.dev/",
		"TRUSTED_PROXIES":     "10.0.0.0/8,192.0.2.7, ::1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.AllowedOrigins(), ","); got != "https://console.tori.dev,https://docs.tori.dev" {
		t.Fatalf("origins %s", got)
	}
	ps, err := c.Proxies()
	if err != nil || len(ps) != 3 || ps[1].String() != "192.0.2.7/32" || ps[2].String() != "::1/128" {
		t.Fatalf("proxies %v %v", ps, err)
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"no signing key":     {map[string]string{}, "GATEWAY_SIGNING_KEY"},
		"short signing key":  {map[string]string{"GATEWAY_SIGNING_KEY": "k"}, "GATEWAY_SIGNING_KEY"},
		"upstream with path": {map[string]string{"APPS_URL": "http://127.0.0.1:8103/v1"}, "APPS_URL"},
		"upstream scheme":    {map[string]string{"LOGS_URL": "ftp://x"}, "LOGS_URL"},
		"bad origin":         {map[string]string{"CORS_ORIGINS": "console.tori.dev"}, "CORS_ORIGINS"},
		"origin with path":   {map[string]string{"CORS_ORIGINS": "https://x.dev/app"}, "CORS_ORIGINS"},
		"bad proxy":          {map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, "TRUSTED_PROXIES"},
		"zero auth limit":    {map[string]string{"AUTH_LIMIT_PER_15MIN": "0"}, "AUTH_LIMIT_PER_15MIN"},
		"negative cache ttl": {map[string]string{"TOKEN_CACHE_TTL": "-1s"}, "TOKEN_CACHE_TTL"},
		"bus queue type":     {map[string]string{"BUS_QUEUE_TYPE": "lazy"}, "BUS_QUEUE_TYPE"},
		"zero shutdown":      {map[string]string{"GATEWAY_SHUTDOWN_TIMEOUT": "0s"}, "GATEWAY_SHUTDOWN_TIMEOUT"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"GATEWAY_SIGNING_KEY": key}
			for k, v := range tc.env {
				env[k] = v
			}
			if name == "no signing key" {
				delete(env, "GATEWAY_SIGNING_KEY")
			}
			_, err := load(t, env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want mention of %s", err, tc.want)
			}
		})
	}
}

func TestDescribeHidesSecrets(t *testing.T) {
	c, err := load(t, map[string]string{"GATEWAY_SIGNING_KEY": key, "GATEWAY_DATABASE_URL": "postgres://tori_gateway:hunter2hunter2@h/tori"})
	if err != nil {
		t.Fatal(err)
	}
	d := pkgconfig.Describe(c)
	if d["GATEWAY_SIGNING_KEY"] != "set" || d["GATEWAY_DATABASE_URL"] == "" {
		t.Fatalf("describe %v", d)
	}
	for _, v := range d {
		if strings.Contains(v, key) || strings.Contains(v, "hunter2") {
			t.Fatalf("secret in %v", d)
		}
	}
	if d["BUS_QUEUE_TYPE"] == "" {
		t.Fatal("embedded bus config not described")
	}
}

func TestReadyUpstreams(t *testing.T) {
	c, err := load(t, map[string]string{"GATEWAY_SIGNING_KEY": key})
	if err != nil {
		t.Fatal(err)
	}
	got := c.ReadyTargets()
	if len(got) != 6 || got["apps"] != "http://127.0.0.1:8103" || got["databases"] != "http://127.0.0.1:8106" || c.ReadyCacheTTL != time.Second {
		t.Fatalf("default ready targets %v, cache %s", got, c.ReadyCacheTTL)
	}
	c, err = load(t, map[string]string{"GATEWAY_SIGNING_KEY": key, "GATEWAY_READY_UPSTREAMS": "apps, databases", "DATABASES_URL": "http://db:9/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ReadyTargets(); len(got) != 2 || got["databases"] != "http://db:9" {
		t.Fatalf("ready targets %v", got)
	}
	for _, bad := range []map[string]string{
		{"GATEWAY_READY_UPSTREAMS": "apps,zoneagent"},
		{"GATEWAY_READY_CACHE": "0s"},
	} {
		bad["GATEWAY_SIGNING_KEY"] = key
		if _, err := load(t, bad); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"GATEWAY_DATABASE_URL": "postgres://tori_gateway:pw@127.0.0.1:5432/tori?sslmode=disable",
		"GATEWAY_AMQP_URL":     "amqp://tori.gateway:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
