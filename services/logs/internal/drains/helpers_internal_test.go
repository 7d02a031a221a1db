package drains

import (
	"crypto/x509"
	"net/http/httptest"
	"testing"
)

func testPool(t *testing.T) *x509.CertPool {
	t.Helper()
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}
