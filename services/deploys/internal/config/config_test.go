package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestSigningKeyRequiredAndDefaults(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{})); err == nil {
		t.Fatal("started without GATEWAY_SIGNING_KEY")
	}
	c = Config{}
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(merge(storeVars, map[string]string{"GATEWAY_SIGNING_KEY": "k"}))); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8104" {
		t.Fatalf("defaults: %+v", c)
	}
	if d := pkgconfig.Describe(&c); d["GATEWAY_SIGNING_KEY"] == "k" {
		t.Fatal("secret printed")
	}
}

// storeVars are the object-store variables bin/bootstrap writes to deploys.env.
var storeVars = map[string]string{
	"OBJECT_STORE_URL":                "http://127.0.0.1:7070",
	"DEPLOYS_OBJECT_STORE_ACCESS_KEY": "tori-deploys",
	"DEPLOYS_OBJECT_STORE_SECRET_KEY": "s3cr3t-0123456789",
	"DEPLOYS_OBJECT_STORE_BUCKET":     "tori-artifacts",
}

// The artifact store is the object store, and deploys does not start without it.
func TestArtifactStoreSetting(t *testing.T) {
	store := storeVars
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"the store with its credentials", store, ""},
		{"no store at all", map[string]string{}, "the artifact store needs"},
		{"without a secret", merge(store, map[string]string{"DEPLOYS_OBJECT_STORE_SECRET_KEY": ""}), "the artifact store needs"},
		{"without a bucket", merge(store, map[string]string{"DEPLOYS_OBJECT_STORE_BUCKET": ""}), "the artifact store needs"},
		{"with a bad URL", merge(store, map[string]string{"OBJECT_STORE_URL": "127.0.0.1:7070"}), "the artifact store needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(merge(tc.env, map[string]string{"GATEWAY_SIGNING_KEY": "k"})))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the error shows the secret: %v", err)
			}
			if err == nil && pkgconfig.Describe(&c)["DEPLOYS_OBJECT_STORE_SECRET_KEY"] == "s3cr3t-0123456789" {
				t.Fatal("secret printed")
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
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

// Previews are served under PREVIEWS_DOMAIN, else preview.<APPS_DOMAIN>; either must be a
// bare domain name.
func TestPreviewsDomain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"defaults", map[string]string{}, "preview.apps.localhost", ""},
		{"under the apps domain", map[string]string{"APPS_DOMAIN": "apps.example.com"}, "preview.apps.example.com", ""},
		{"its own", map[string]string{"APPS_DOMAIN": "apps.example.com", "PREVIEWS_DOMAIN": "Previews.Example.NET"}, "previews.example.net", ""},
		{"a URL", map[string]string{"PREVIEWS_DOMAIN": "https://p.example.com"}, "", "PREVIEWS_DOMAIN must be a bare domain name"},
		{"an apps domain with a port", map[string]string{"APPS_DOMAIN": "apps.localhost:8443"}, "", "APPS_DOMAIN must be a bare domain name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(merge(storeVars, merge(tc.env, map[string]string{"GATEWAY_SIGNING_KEY": "k"}))))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Previews() != tc.want {
				t.Fatalf("%q, %v; want %q", c.Previews(), err, tc.want)
			}
		})
	}
}
