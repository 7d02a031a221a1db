package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

// base64 of 32 bytes, as bin/bootstrap writes it.
const testStorageKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func TestEdgeTLSSettings(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(nil)); err != nil {
		t.Fatal(err)
	}
	if c.ACMENewOrdersPerAccountPerDay != 20 || c.Wildcard != "" {
		t.Fatalf("per-account cap %d, wildcard %q", c.ACMENewOrdersPerAccountPerDay, c.Wildcard)
	}
	if !c.TLSEnabled() || c.TLSAddr != "127.0.0.1:8443" || c.HTTPSPort() != 8443 || !c.Challenge("http-01") || !c.Challenge("tls-alpn-01") {
		t.Fatalf("TLS defaults: %q %d", c.TLSAddr, c.HTTPSPort())
	}
	if d := pkgconfig.Describe(&c); strings.Contains(d["ZONE_TLS_STORAGE_KEY"], testStorageKey) {
		t.Fatal("the storage key is printed")
	}
	for _, tc := range []struct {
		env map[string]string
		ok  bool
	}{
		{map[string]string{"EDGE_PUBLIC_HTTPS_PORT": "443"}, true},
		{map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir", "ZONE_ACME_CA_ROOT": "/tmp/pebble.pem"}, true},
		{map[string]string{"EDGE_TLS_ADDR": "off", "ZONE_TLS_STORAGE_KEY": ""}, true},
		{map[string]string{"ZONE_TLS_STORAGE_KEY": ""}, false},
		{map[string]string{"ZONE_TLS_STORAGE_KEY": "c2hvcnQ="}, false},
		{map[string]string{"EDGE_TLS_ADDR": "8443"}, false},
		{map[string]string{"ZONE_ACME_CA": "http://127.0.0.1:14000/dir"}, false},
		{map[string]string{"ZONE_ACME_CA_ROOT": "/tmp/pebble.pem"}, false},
		{map[string]string{"EDGE_PUBLIC_HTTPS_PORT": "70000"}, false},
		{map[string]string{"ZONE_ACME_ORDERS_PER_HOUR": "-1"}, false},
		{map[string]string{"ZONE_ACME_CHALLENGES": "tls-alpn-01"}, true},
		{map[string]string{"ZONE_ACME_CHALLENGES": "dns-01"}, false},
		{map[string]string{"ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY": "-1"}, false},
		{map[string]string{"ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY": "0"}, true},
		{map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir", "ZONE_TLS_WILDCARD": "dns01", "ZONE_TLS_DNS01_HOOK": "/usr/local/bin/dns01"}, true},
		{map[string]string{"ZONE_TLS_WILDCARD": "dns01", "ZONE_TLS_DNS01_HOOK": "/usr/local/bin/dns01"}, false}, // the local CA needs no DNS
		{map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir", "ZONE_TLS_WILDCARD": "dns01"}, false},
		{map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir", "ZONE_TLS_WILDCARD": "yes", "ZONE_TLS_DNS01_HOOK": "/x"}, false},
		{map[string]string{"ZONE_TLS_WILDCARD": "local"}, true},                                                 // one *.<APPS_DOMAIN> from the local CA
		{map[string]string{"ZONE_ACME_CA": "https://127.0.0.1:14000/dir", "ZONE_TLS_WILDCARD": "local"}, false}, // local is the local CA's
	} {
		var c Config
		err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(tc.env))
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v, want ok=%v", tc.env, err, tc.ok)
		}
	}
	c = Config{Edge: Edge{EdgeTLS: EdgeTLS{TLSAddr: "0.0.0.0:443", PublicHTTPSPort: 0}}}
	if c.HTTPSPort() != 443 {
		t.Fatal("the public port defaults to the listener's")
	}
}
