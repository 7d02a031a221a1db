package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"slices"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// With the local CA, previews are served under one *.<PREVIEWS_DOMAIN> certificate made at
// start: every preview host gets it, none gets a certificate of its own, and an app's own
// host is still ordered on demand.
func TestPreviewsShareOneWildcard(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	hosts := []string{"shop-abc123.preview.apps.test", "blog-def456.preview.apps.test"}
	m, err := certs.New(certs.Options{Storage: st, Serves: served(append([]string{"blog.apps.test"}, hosts...)...), Local: ca,
		PreviewWildcard: "*.preview.apps.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	addr := serveTLS(t, m)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Root())
	leaf := func(name string) *x509.Certificate {
		conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: name, RootCAs: roots})
		if err != nil {
			return nil
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	testinfra.Eventually(t, 10*time.Second, "the previews' wildcard served", func() bool { return leaf(hosts[0]) != nil })
	for _, h := range hosts {
		c := leaf(h)
		if c == nil || !slices.Equal(c.DNSNames, []string{"*.preview.apps.test"}) {
			t.Fatalf("%s served %v, want the previews' wildcard", h, c)
		}
		if st.Exists(context.Background(), "certificates/"+ca.IssuerKey()+"/"+h) {
			t.Errorf("a certificate of its own was stored for %s", h)
		}
	}
	if c := leaf("blog.apps.test"); c == nil || !slices.Equal(c.DNSNames, []string{"blog.apps.test"}) {
		t.Fatalf("the app's host served %v", c)
	}
}

// ZONE_TLS_WILDCARD=local: the local CA signs one *.<APPS_DOMAIN> at start and every app's
// host is served it (a restart loads one certificate, not one per app); a custom hostname
// is still ordered on its own, and a preview host still gets the previews' wildcard.
func TestLocalAppsWildcard(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	apps := []string{"blog.apps.test", "shop.apps.test"}
	m, err := certs.New(certs.Options{Storage: st, Serves: served(append([]string{"www.example.com", "shop-abc123.preview.apps.test"}, apps...)...),
		Local: ca, Wildcard: "*.apps.test", PreviewWildcard: "*.preview.apps.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	addr := serveTLS(t, m)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Root())
	leaf := func(name string) *x509.Certificate {
		conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: name, RootCAs: roots})
		if err != nil {
			return nil
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	// Both wildcards are ordered in the background at start; until the previews' one is in
	// the cache a preview host is refused (it never gets a certificate of its own).
	testinfra.Eventually(t, 10*time.Second, "the apps' wildcard served", func() bool { return leaf(apps[0]) != nil })
	testinfra.Eventually(t, 10*time.Second, "the previews' wildcard served", func() bool { return leaf("shop-abc123.preview.apps.test") != nil })
	for _, h := range apps {
		c := leaf(h)
		if c == nil || !slices.Equal(c.DNSNames, []string{"*.apps.test"}) {
			t.Fatalf("%s served %v, want the apps' wildcard", h, c)
		}
		if st.Exists(context.Background(), "certificates/"+ca.IssuerKey()+"/"+h) {
			t.Errorf("a certificate of its own was stored for %s", h)
		}
	}
	if c := leaf("shop-abc123.preview.apps.test"); c == nil || !slices.Equal(c.DNSNames, []string{"*.preview.apps.test"}) {
		t.Fatalf("the preview's host served %v", c)
	}
	if c := leaf("www.example.com"); c == nil || !slices.Equal(c.DNSNames, []string{"www.example.com"}) {
		t.Fatalf("the custom hostname served %v", c)
	}
}
