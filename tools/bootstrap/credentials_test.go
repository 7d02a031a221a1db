package main

import (
	"os"
	"strings"
	"testing"

	"tori.dev/pkg/pgstore"
)

func TestSettingsRefuseModesThatWouldStrandAPassword(t *testing.T) {
	for _, tc := range []struct {
		name    string
		s       settings
		wantErr string
	}{
		{"make run", settings{Credentials: "files", Broker: "rabbitmqctl"}, ""},
		{"offline", settings{Credentials: "files", Broker: "definitions", Offline: true}, ""},
		{"offline without definitions", settings{Credentials: "files", Broker: "none", Offline: true}, "BOOTSTRAP_BROKER=definitions"},
		{"in the cluster", settings{Credentials: "env", Broker: "none"}, ""},
		{"in the cluster making broker users", settings{Credentials: "env", Broker: "rabbitmqctl"}, "BOOTSTRAP_BROKER=none"},
		{"offline from the environment", settings{Credentials: "env", Broker: "none", Offline: true}, "one or the other"},
		{"unknown", settings{Credentials: "vault", Broker: "none"}, "files or env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.check()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("check() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestCredentialsFromTheEnvironment(t *testing.T) {
	s := settings{Credentials: "env", Broker: "none"}
	identity := principal{Name: "identity", DB: pgstore.Service{Schema: "identity", Role: "tori_identity"}}
	for _, tc := range []struct {
		name, url, wantErr string
	}{
		{"missing", "", "IDENTITY_DATABASE_URL must be set"},
		{"no password", "postgres://tori_identity@postgres:5432/tori", "with a password"},
		{"another role", "postgres://tori_apps:pw@postgres:5432/tori", "as tori_identity"},
		{"an admin", "postgres://postgres:pw@postgres:5432/tori", "as tori_identity"},
		{"its own", "postgres://tori_identity:0123abcd@postgres:5432/tori?search_path=identity", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("IDENTITY_DATABASE_URL", tc.url)
			got, err := s.credentialsOf(identity, "/nonexistent/identity.env")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "0123abcd") {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got["IDENTITY_DATABASE_URL"] != tc.url || passwordIn(got["IDENTITY_DATABASE_URL"]) != "0123abcd" {
				t.Fatalf("credentials %v", got)
			}
			// Taken out of the environment: the bootstrap applies it rather than leaving it alone.
			if _, set := os.LookupEnv("IDENTITY_DATABASE_URL"); set {
				t.Fatalf("IDENTITY_DATABASE_URL is still in the environment")
			}
		})
	}

	t.Run("the zone's provisioning URL is required with its database URL", func(t *testing.T) {
		zone := principals("local")
		var z principal
		for _, p := range zone {
			if p.Name == "zoneagent" {
				z = p
			}
		}
		t.Setenv("ZONEAGENT_DATABASE_URL", "postgres://tori_zoneagent_local:pw1@postgres:5432/tori")
		t.Setenv(zonePostgresVar, "")
		if _, err := s.credentialsOf(z, ""); err == nil || !strings.Contains(err.Error(), zonePostgresVar) {
			t.Fatalf("err = %v, want one naming %s", err, zonePostgresVar)
		}
	})
}
