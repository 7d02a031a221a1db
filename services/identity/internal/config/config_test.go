package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func TestDefaults(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{"GATEWAY_SIGNING_KEY": "k"})); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"IDENTITY_ADDR":             "127.0.0.1:8101",
		"CONSOLE_URL":               "http://127.0.0.1:5173",
		"MAIL_FROM":                 "Tori <no-reply@tori.localhost>",
		"DATA_DIR":                  "./var",
		"IDENTITY_SHUTDOWN_TIMEOUT": "10s",
		"SMTP_URL":                  "",
		"IDENTITY_AMQP_URL":         "amqp://tori.identity:xxxxx@127.0.0.1:5672/", // Describe hides passwords in URLs
	}
	got := pkgconfig.Describe(c)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got["GATEWAY_SIGNING_KEY"] != "set" || got["IDENTITY_DATABASE_URL"] != "postgres://tori_identity:xxxxx@127.0.0.1:5432/tori?sslmode=disable" {
		t.Errorf("secrets must print as set/unset: %v", got)
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		env     map[string]string
		wantErr string
	}{
		"no signing key":   {map[string]string{}, "GATEWAY_SIGNING_KEY"},
		"bad smtp scheme":  {map[string]string{"SMTP_URL": "http://mail:25"}, "SMTP_URL"},
		"smtp no port":     {map[string]string{"SMTP_URL": "smtp://mail"}, "SMTP_URL"},
		"bad console":      {map[string]string{"CONSOLE_URL": "console"}, "CONSOLE_URL"},
		"bad from":         {map[string]string{"MAIL_FROM": "not an address"}, "MAIL_FROM"},
		"good smtp":        {map[string]string{"SMTP_URL": "smtp://u:p@mail:2525"}, ""},
		"no shutdown time": {map[string]string{"IDENTITY_SHUTDOWN_TIMEOUT": "0s"}, "IDENTITY_SHUTDOWN_TIMEOUT"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"GATEWAY_SIGNING_KEY": "k"}
			if name == "no signing key" {
				env = map[string]string{}
			}
			for k, v := range tc.env {
				env[k] = v
			}
			var c Config
			err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(env))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error naming %s, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "u:p@") {
				t.Fatalf("error leaks the SMTP password: %v", err)
			}
		})
	}
}

func TestParseSMTPURL(t *testing.T) {
	s, err := ParseSMTPURL("smtp://alice:s3cret@mail.example:587")
	if err != nil || s.Addr != "mail.example:587" || s.Username != "alice" || s.Password != "s3cret" {
		t.Fatalf("got %+v %v", s, err)
	}
}

// withCredentials adds the service's own credentials, which bin/bootstrap writes, to env.
func withCredentials(env map[string]string) map[string]string {
	out := map[string]string{
		"IDENTITY_DATABASE_URL": "postgres://tori_identity:pw@127.0.0.1:5432/tori?sslmode=disable",
		"IDENTITY_AMQP_URL":     "amqp://tori.identity:pw@127.0.0.1:5672/",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}
