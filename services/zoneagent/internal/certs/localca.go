// Package certs gives the edge its certificates: certmagic on demand, for the names the edge
// serves only, from an ACME CA or from the zone's own local CA (the default for `make run`).
package certs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/caddyserver/certmagic"
)

// Lifetimes of the local CA's certificates. A leaf lives a week: certmagic renews it with a
// third left, so renewal runs often enough to be seen working under `make run`.
const (
	localRootLifetime = 10 * 365 * 24 * time.Hour
	localLeafLifetime = 7 * 24 * time.Hour
)

// LocalCA is an issuer backed by a CA made once in DATA_DIR/tls: root.pem (for clients to
// trust: `curl --cacert`) and root.key (0600). It signs a certificate for exactly the names of
// the request it is given; certmagic asks it only for names the edge serves.
type LocalCA struct {
	root *x509.Certificate
	key  *ecdsa.PrivateKey
}

var _ certmagic.Issuer = (*LocalCA)(nil)

// RootFile is the local CA's certificate in dir.
func RootFile(dir string) string { return filepath.Join(dir, "root.pem") }

// LoadOrCreateLocalCA opens the CA in dir, making it on first use.
func LoadOrCreateLocalCA(dir string) (*LocalCA, error) {
	certPEM, certErr := os.ReadFile(RootFile(dir))
	keyPEM, keyErr := os.ReadFile(filepath.Join(dir, "root.key"))
	if errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist) {
		return createLocalCA(dir)
	}
	if err := errors.Join(certErr, keyErr); err != nil {
		return nil, fmt.Errorf("local CA in %s: %w", dir, err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("local CA in %s: root.pem or root.key is not PEM", dir)
	}
	root, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("local CA in %s: %w", dir, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("local CA in %s: %w", dir, err)
	}
	return &LocalCA{root: root, key: key}, nil
}

func createLocalCA(dir string) (*LocalCA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Tori local CA", Organization: []string{"Tori (local development)"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(localRootLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	root, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	// The key first, by a unique name renamed into place, then the certificate: a root.pem
	// always has its key beside it.
	if err := writeAtomic(filepath.Join(dir, "root.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(RootFile(dir), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return &LocalCA{root: root, key: key}, nil
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Root is the CA's certificate.
func (ca *LocalCA) Root() *x509.Certificate { return ca.root }

// IssuerKey names the CA in storage, so certificates of another local CA (a DATA_DIR made
// afresh) are not mistaken for this one's.
func (ca *LocalCA) IssuerKey() string {
	sum := sha256.Sum256(ca.root.Raw)
	return "tori-local-ca-" + hex.EncodeToString(sum[:6])
}

// Issue signs a server certificate for the request's names.
func (ca *LocalCA) Issue(_ context.Context, req *x509.CertificateRequest) (*certmagic.IssuedCertificate, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return nil, errors.New("local CA: the request names no host")
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: firstName(req)},
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPAddresses,
		NotBefore:    now.Add(-5 * time.Minute),
		NotAfter:     now.Add(localLeafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.root, req.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	}
	chain := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.root.Raw})...)
	return &certmagic.IssuedCertificate{Certificate: chain}, nil
}

func firstName(req *x509.CertificateRequest) string {
	if len(req.DNSNames) > 0 {
		return req.DNSNames[0]
	}
	return req.IPAddresses[0].String()
}
