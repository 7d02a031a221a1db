package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// testTLSKey is a ZONE_TLS_STORAGE_KEY for tests (base64 of 32 bytes).
var testTLSKey = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// tlsEdge is the edge's listeners as the agent opens them, over a table the test fills.
type tlsEdge struct {
	cfg   config.EdgeProcess
	table *edge.Table
	// slug and host name this edge's one site. Each edge has its own: certmagic keeps the
	// names it is obtaining or renewing in one map for the whole process, so a renewal an
	// earlier test's edge left running (its CA gone, retrying for minutes) would hold up a
	// later test's first handshake for the same name.
	slug, host string
	edge       *edge.Edge // its handler: a benchmark sets Counts before any request
}

// edgeSerial numbers the edges of one test binary (their site names).
var edgeSerial atomic.Int64

// startTLSEdge opens the edge with cfg's TLS settings (addresses, key and data folder filled
// in) on a fresh zone schema, and a static site for app "app1" (served once routed).
func startTLSEdge(t testing.TB, cfg config.EdgeProcess) *tlsEdge {
	t.Helper()
	if cfg.EdgeAddr == "" { // set: a test whose CA must know the ports first
		cfg.EdgeAddr = testinfra.FreeAddr(t)
	}
	if cfg.TLSAddr == "" { // off: plain only (the benchmarks compare the two)
		cfg.TLSAddr = testinfra.FreeAddr(t)
	}
	cfg.StorageKey, cfg.EdgeMaxConnsPerIP, cfg.DataDir = testTLSKey, 64, t.TempDir()
	if cfg.RenewCheckInterval == 0 {
		cfg.RenewCheckInterval = time.Minute
	}
	slug := fmt.Sprintf("site%d", edgeSerial.Add(1))
	e := &tlsEdge{cfg: cfg, table: edge.NewTable(), slug: slug, host: slug + ".apps.test"}
	// The zone's sites in its bucket, and the one site published as the zone publishes it.
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "local")
	cfg.ObjectStoreURL, cfg.ObjectStoreAccess = env["OBJECT_STORE_URL"], env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"]
	cfg.ObjectStoreSecret, cfg.ObjectStoreBucket, cfg.CacheBytes = env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], env["ZONEAGENT_OBJECT_STORE_BUCKET"], 16<<20
	siteStore, siteCache, err := openSites(cfg)
	if err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	os.WriteFile(filepath.Join(site, "index.html"), []byte("hello over tls"), 0o644)
	if err := siteStore.Publish(context.Background(), "app1", "d1", site); err != nil {
		t.Fatal(err)
	}
	// The edge's and certmagic's log, shown only when the test fails: it says why a handshake
	// or an order stalled.
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the edge's log:\n%s", logBuf.String())
		}
	})
	// PreviewsDomain only when the test sets one: the others' orders stay as they were.
	e.edge = &edge.Edge{Domain: "apps.test", PreviewsDomain: cfg.PreviewsDomain, Sites: siteCache, Table: e.table}
	es, err := listenEdge(cfg, storetest.NewPool(t), e.edge, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- es.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		es.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("edge: %v", err)
		}
	})
	return e
}

// lockedBuffer is a log sink written by the edge's goroutines and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// maxLogBytes bounds what a long benchmark's edge keeps of its log.
const maxLogBytes = 1 << 20

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() < maxLogBytes {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (e *tlsEdge) route() {
	e.table.Set(edge.Route{AppID: "app1", Slug: e.slug, DeployID: "d1", Kind: revision.KindStatic})
}

// client asks the TLS listener for any host, trusting roots only; one connection per request.
func (e *tlsEdge) client(roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		// A safety net, not a speed check: the first request issues the name's certificate
		// and fills the edge's cache from the store, which a loaded CI machine (four test
		// binaries at once) once took past ten seconds to do.
		Timeout:       time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, "tcp", e.cfg.TLSAddr)
			},
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			ForceAttemptHTTP2: true,
			DisableKeepAlives: true,
		},
	}
}

func (e *tlsEdge) httpsURL(host, path string) string {
	_, port, _ := net.SplitHostPort(e.cfg.TLSAddr)
	return "https://" + host + ":" + port + path
}

// handshake opens a TLS connection for name and reports the certificate or the error. The
// dialer's bound covers the handshake, which may issue the certificate: a safety net.
func (e *tlsEdge) handshake(name string, roots *x509.CertPool) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", e.cfg.TLSAddr, &tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// Under make run's default the edge serves HTTPS from the zone's local CA, whose root is in
// DATA_DIR/tls/root.pem; http:// answers 308 to the https:// address, HSTS comes with the
// app's own hostname, HTTP/2 is spoken, and a name the edge does not serve gets an alert.
func TestEdgeServesHTTPSFromTheLocalCA(t *testing.T) {
	e := startTLSEdge(t, config.EdgeProcess{})
	e.route()
	pemRoot, err := os.ReadFile(filepath.Join(e.cfg.DataDir, "tls", "root.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemRoot)

	// The certificate first, so a failure says which step stalled: its issue or the request.
	if _, err := e.handshake(e.host, roots); err != nil {
		t.Fatalf("the first handshake, which issues the certificate: %v", err)
	}
	resp, err := e.client(roots).Get(e.httpsURL(e.host, "/"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello over tls" || resp.ProtoMajor != 2 {
		t.Fatalf("https: %d %s %q", resp.StatusCode, resp.Proto, body)
	}
	if resp.Header.Get("Strict-Transport-Security") != edge.HSTS {
		t.Errorf("HSTS %q", resp.Header.Get("Strict-Transport-Security"))
	}
	// A 404 is served over TLS too (a path the site lacks).
	if resp, err := e.client(roots).Get(e.httpsURL(e.host, "/missing")); err != nil || resp.StatusCode != 404 {
		t.Fatalf("404 over TLS: %v %v", resp, err)
	}

	req, _ := http.NewRequest("GET", "http://"+e.cfg.EdgeAddr+"/a?b=c", nil)
	req.Host = e.host
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := e.httpsURL(e.host, "/a?b=c"); resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("http: %d %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	if _, err := e.handshake("other.apps.test", roots); err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
		t.Fatalf("an unknown name: %v, want a TLS alert", err)
	}
	// The CA is made once: a second agent on the same DATA_DIR trusts the same root.
	ca, err := certs.LoadOrCreateLocalCA(filepath.Join(e.cfg.DataDir, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	if leaf, err := e.handshake(e.host, roots); err != nil || leaf.CheckSignatureFrom(ca.Root()) != nil {
		t.Fatalf("the leaf is not the local CA's: %v", err)
	}
}
