package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

// Both lists count (browsers honour the private section: Heroku's and Render's domains are
// there); a name under a suffix, or a single label the list does not hold, is no suffix.
func TestIsPublicSuffix(t *testing.T) {
	for domain, want := range map[string]bool{
		"herokuapp.com":         true,  // private section
		"onrender.com":          true,  // private section
		"github.io":             true,  // private section
		"co.uk":                 true,  // ICANN section
		"com":                   true,  // ICANN section
		"Herokuapp.COM.":        true,  // case and the root's dot do not matter
		"apps.localhost":        false, // make run's default
		"localhost":             false, // only the list's implicit "*" rule
		"apps.example.com":      false,
		"example.herokuapp.com": false,
	} {
		if got := IsPublicSuffix(domain); got != want {
			t.Errorf("IsPublicSuffix(%q) = %v, want %v", domain, got, want)
		}
	}
}

// The start line and /readyz say plainly when the apps domain shares its cookies and when a
// public CA is asked for each app hostname without the wildcard; the console may not live
// under the apps domain at all.
func TestPosture(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env           map[string]string
		domain, certs string // "ok", or a word the sentence holds
		refused       bool
	}{
		{name: "make run's defaults", env: nil, domain: "apps.localhost is not a public suffix", certs: "ok"},
		{name: "a listed apps domain", env: map[string]string{"APPS_DOMAIN": "herokuapp.com"}, domain: "ok", certs: "ok"},
		{name: "a public CA without the wildcard", env: map[string]string{"APPS_DOMAIN": "herokuapp.com", "ZONE_ACME_CA": "https://acme-v02.api.letsencrypt.org/directory"},
			domain: "ok", certs: "public CA at acme-v02.api.letsencrypt.org, without ZONE_TLS_WILDCARD=dns01"},
		{name: "a public CA with the wildcard", env: map[string]string{"ZONE_ACME_CA": "https://acme-v02.api.letsencrypt.org/directory", "ZONE_TLS_WILDCARD": "dns01", "ZONE_TLS_DNS01_HOOK": "/x"},
			domain: "not a public suffix", certs: "ok"},
		{name: "a CA on loopback (Pebble)", env: map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir"}, domain: "not a public suffix", certs: "ok"},
		{name: "a CA of the operator's network", env: map[string]string{"ZONE_ACME_CA": "https://ca.corp.internal/dir"}, domain: "not a public suffix", certs: "ok"},
		{name: "no TLS at the edge", env: map[string]string{"EDGE_TLS_ADDR": "off", "ZONE_ACME_CA": "https://acme-v02.api.letsencrypt.org/directory"}, domain: "not a public suffix", certs: "ok"},
		{name: "the console on the apps domain", env: map[string]string{"APPS_DOMAIN": "apps.example.com", "CONSOLE_URL": "https://apps.example.com"}, refused: true},
		{name: "the console under the apps domain", env: map[string]string{"APPS_DOMAIN": "apps.example.com", "CONSOLE_URL": "https://Console.Apps.Example.com."}, refused: true},
		{name: "the console beside the apps domain", env: map[string]string{"APPS_DOMAIN": "apps.example.com", "CONSOLE_URL": "https://console.example.com"}, domain: "not a public suffix", certs: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(tc.env))
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "CONSOLE_URL must not be APPS_DOMAIN or under it") {
					t.Fatalf("want CONSOLE_URL refused, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := c.Posture()
			for _, got := range []struct{ what, got, want string }{{"appsDomain", p.AppsDomain, tc.domain}, {"certificates", p.Certificates, tc.certs}} {
				if got.want == "ok" && got.got != "ok" || got.want != "ok" && !strings.Contains(got.got, got.want) {
					t.Errorf("%s: %q, want %q", got.what, got.got, got.want)
				}
			}
			if n := len(p.Warnings()); n != btoi(tc.domain != "ok")+btoi(tc.certs != "ok") {
				t.Errorf("%d warnings: %v", n, p.Warnings())
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
