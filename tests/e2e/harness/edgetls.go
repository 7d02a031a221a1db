package harness

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// tlsStorageKey is a ZONE_TLS_STORAGE_KEY as bin/bootstrap writes it: base64 of 32 bytes.
func tlsStorageKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// EdgeRoots trusts the zone's local CA only: its root, which the zone agent writes to
// DATA_DIR/tls/root.pem (what `curl --cacert` is given under make run).
func (s *Stack) EdgeRoots() *x509.CertPool {
	s.t.Helper()
	pemRoot, err := os.ReadFile(filepath.Join(s.DataDir, "tls", "root.pem"))
	if err != nil {
		s.t.Fatalf("harness: the zone's local root: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemRoot) {
		s.t.Fatal("harness: DATA_DIR/tls/root.pem holds no certificate")
	}
	return roots
}

// EdgeClient speaks HTTPS to the edge for any hostname (as `curl --resolve` does: every name
// is dialled at the edge's TLS listener), verifying the certificate against the zone's local
// root. Redirects are not followed.
func (s *Stack) EdgeClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	addr := s.EdgeTLS
	return &http.Client{
		// A safety net only: some probes run for longer than half a minute on purpose (a
		// fork bomb's children sleep 30 s before they exit and close the answer's pipe).
		Timeout:       2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, "tcp", addr)
			},
			TLSClientConfig:   &tls.Config{RootCAs: s.EdgeRoots()},
			ForceAttemptHTTP2: true,
		},
	}
}

// EdgeURL is https://host:<TLS port>path.
func (s *Stack) EdgeURL(host, path string) string {
	_, port, _ := net.SplitHostPort(s.EdgeTLS)
	return "https://" + net.JoinHostPort(host, port) + path
}

// EdgeTLSConfig is a client TLS config for serverName that trusts the zone's local root.
func (s *Stack) EdgeTLSConfig(serverName string) *tls.Config {
	return &tls.Config{ServerName: serverName, RootCAs: s.EdgeRoots()}
}
