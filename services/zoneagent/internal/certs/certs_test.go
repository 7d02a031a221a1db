package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// countingCA counts the certificates it signs.
type countingCA struct {
	*certs.LocalCA
	issued atomic.Int32
}

func (c *countingCA) Issue(ctx context.Context, req *x509.CertificateRequest) (*certmagic.IssuedCertificate, error) {
	c.issued.Add(1)
	return c.LocalCA.Issue(ctx, req)
}

func served(names ...string) func(string) bool {
	return func(h string) bool {
		for _, n := range names {
			if h == n {
				return true
			}
		}
		return false
	}
}

// The local CA is made once: a second open finds the same root, written where curl reads it.
func TestLocalCAIsMadeOnce(t *testing.T) {
	dir := t.TempDir() + "/tls"
	a, err := certs.LoadOrCreateLocalCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := certs.LoadOrCreateLocalCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Root().Equal(b.Root()) || a.IssuerKey() != b.IssuerKey() {
		t.Fatal("a second open made another CA")
	}
	if fi, err := os.Stat(dir + "/root.key"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("root.key: %v %v", fi, err)
	}
	pemRoot, err := os.ReadFile(certs.RootFile(dir))
	if err != nil || !strings.Contains(string(pemRoot), "BEGIN CERTIFICATE") {
		t.Fatalf("root.pem: %v", err)
	}
}

// serveTLS runs an HTTPS server with m's TLS on a loopback port and returns its address.
func serveTLS(t *testing.T, m *certs.Manager) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", m.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello " + r.Proto)) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A served name gets a certificate chained to the local root over HTTP/2; a name the edge does
// not serve gets a TLS alert and no certificate is signed for it.
func TestServedNamesOnly(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingCA{LocalCA: ca}
	st, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	m, err := certs.New(certs.Options{Storage: st, Serves: served("blog.apps.test"), Local: ca})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	certs.SetIssuerForTest(m, counting)
	addr := serveTLS(t, m)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Root())

	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "blog.apps.test", RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("handshake for a served name: %v", err)
	}
	state := conn.ConnectionState()
	conn.Close()
	if state.NegotiatedProtocol != "h2" {
		t.Errorf("ALPN %q, want h2", state.NegotiatedProtocol)
	}
	if leaf := state.PeerCertificates[0]; leaf.VerifyHostname("blog.apps.test") != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		t.Errorf("leaf %v until %v", leaf.DNSNames, leaf.NotAfter)
	}

	_, err = tls.Dial("tcp", addr, &tls.Config{ServerName: "evil.apps.test", RootCAs: roots})
	// Over TCP, crypto/tls reports a peer's alert only in its text.
	if err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
		t.Fatalf("handshake for an unknown name: %v, want a TLS alert", err)
	}
	if n := counting.issued.Load(); n != 1 {
		t.Fatalf("%d certificates signed, want 1 (none for the unknown name)", n)
	}
	if st.Exists(context.Background(), "certificates/"+ca.IssuerKey()+"/evil.apps.test") {
		t.Fatal("something was stored for the unknown name")
	}
}

// Two edges of one zone (two certmagic configs, two pools on the zone's schema) asked for the
// same name at once order one certificate between them, and both serve it.
func TestTwoEdgesOrderOnce(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingCA{LocalCA: ca}
	pools := storetest.NewPools(t, 2)
	var managers []*certs.Manager
	for _, p := range pools {
		st, _ := store.NewCertStorage(p, make([]byte, 32))
		m, err := certs.New(certs.Options{Storage: st, Serves: served("shop.apps.test"), Local: ca})
		if err != nil {
			t.Fatal(err)
		}
		certs.SetIssuerForTest(m, counting)
		t.Cleanup(m.Stop)
		managers = append(managers, m)
	}
	var wg sync.WaitGroup
	leaves := make([]*x509.Certificate, len(managers))
	errs := make([]error, len(managers))
	for i, m := range managers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leaves[i], errs[i] = m.Certificate(context.Background(), "shop.apps.test")
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := counting.issued.Load(); n != 1 {
		t.Fatalf("%d certificates ordered, want 1", n)
	}
	if !leaves[0].Equal(leaves[1]) {
		t.Fatal("the edges serve different certificates")
	}
}

// Past the zone's order rate, an order is refused (the handshake fails) and counted as
// limited; the CA is not asked.
func TestZoneOrderRateLimit(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingCA{LocalCA: ca}
	st, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	// One an hour from an ACME CA (its issuer replaced by the counting local one): a burst of
	// one, then none for an hour.
	m, err := certs.New(certs.Options{Storage: st, Serves: served("a.apps.test", "b.apps.test"),
		ACME: &certs.ACME{Directory: "https://acme.invalid/directory"}, OrdersPerHour: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	certs.SetIssuerForTest(m, counting)
	limited := func() float64 {
		return testutil.ToFloat64(certs.OrdersForTest("new", "limited"))
	}
	before := limited()
	if _, err := m.Certificate(context.Background(), "a.apps.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Certificate(context.Background(), "b.apps.test"); err == nil || !strings.Contains(err.Error(), certs.ErrOrderLimit.Error()) {
		t.Fatalf("a second order within the hour: %v", err)
	}
	if n := counting.issued.Load(); n != 1 {
		t.Fatalf("%d certificates signed, want 1", n)
	}
	if limited()-before != 1 {
		t.Fatalf("limited orders counted %v", limited()-before)
	}
	// A certificate already held is served without an order.
	if _, err := m.Certificate(context.Background(), "a.apps.test"); err != nil {
		t.Fatal(err)
	}

	// The local CA has no CA limits to protect: the same bound does not apply to it.
	st2, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	local, err := certs.New(certs.Options{Storage: st2, Serves: served("a.apps.test", "b.apps.test"), Local: ca, OrdersPerHour: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(local.Stop)
	for _, name := range []string{"a.apps.test", "b.apps.test"} {
		if _, err := local.Certificate(context.Background(), name); err != nil {
			t.Fatalf("local CA, %s: %v", name, err)
		}
	}
}

// Past an account's daily cap its next order is refused (limited_account) while another
// account's hostnames are still ordered: one customer's many hostnames cannot use the zone's
// allowance up. The refusal takes nothing from the zone's bucket.
func TestAccountOrderRateLimit(t *testing.T) {
	ca, err := certs.LoadOrCreateLocalCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingCA{LocalCA: ca}
	st, _ := store.NewCertStorage(storetest.NewPool(t), make([]byte, 32))
	accountOf := map[string]string{"a1.example.test": "greedy", "a2.example.test": "greedy", "b1.example.test": "modest", "b2.example.test": "modest"}
	m, err := certs.New(certs.Options{Storage: st, Serves: served("a1.example.test", "a2.example.test", "b1.example.test", "b2.example.test"),
		ACME: &certs.ACME{Directory: "https://acme.invalid/directory"}, OrdersPerHour: 28, NewOrdersPerAccountPerDay: 1,
		Owner: func(_ context.Context, host string) (certs.Owner, bool) {
			acct, ok := accountOf[host]
			return certs.Owner{AppID: "app-" + acct, AccountID: acct, Custom: true}, ok
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	certs.SetIssuerForTest(m, counting)
	before := testutil.ToFloat64(certs.OrdersForTest("new", "limited_account"))
	ctx := context.Background()
	if _, err := m.Certificate(ctx, "a1.example.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Certificate(ctx, "a2.example.test"); !limitedBy(err, certs.ErrAccountOrderLimit) {
		t.Fatalf("the account's second order within the hour: %v", err)
	}
	// New orders' burst is 2 (21 of the 28 an hour): had the refused order taken a zone
	// token, this one would be refused by the zone.
	if _, err := m.Certificate(ctx, "b1.example.test"); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if _, err := m.Certificate(ctx, "b2.example.test"); !limitedBy(err, certs.ErrAccountOrderLimit) {
		t.Fatalf("the other account's second order: %v", err)
	}
	if n := counting.issued.Load(); n != 2 {
		t.Fatalf("%d certificates signed, want 2", n)
	}
	if got := testutil.ToFloat64(certs.OrdersForTest("new", "limited_account")) - before; got != 2 {
		t.Fatalf("limited_account counted %v, want 2", got)
	}
}

func limitedBy(err, limit error) bool {
	return err != nil && strings.Contains(err.Error(), limit.Error())
}
