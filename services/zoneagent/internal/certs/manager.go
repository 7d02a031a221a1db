package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"
)

// RenewalWindowRatio: a certificate is renewed once a third of its lifetime is left.
const RenewalWindowRatio = 1.0 / 3

// ErrNotServed refuses a certificate for a name the edge does not serve: the handshake fails
// with an alert and no CA is asked.
var ErrNotServed = errors.New("the edge serves no such host")

// ACME is an ACME CA to order from.
type ACME struct {
	// Directory is the CA's directory URL (ZONE_ACME_CA).
	Directory string
	// Roots, when set, are the only roots trusted for the CA's own API (tests: Pebble's).
	Roots *x509.CertPool
	Email string
	// ListenHost, HTTPPort and TLSPort are where the edge answers challenges, so certmagic
	// never opens listeners of its own for them (it tries and finds the port in use).
	ListenHost string
	HTTPPort   int
	TLSPort    int
	// NoHTTP01 and NoTLSALPN01 leave a challenge type out (e.g. when port 80 does not reach
	// the edge); at least one stays.
	NoHTTP01, NoTLSALPN01 bool
}

// Options make a Manager.
type Options struct {
	Storage certmagic.Storage
	// Serves reports whether the edge serves a host now: the only names a certificate is
	// ordered for.
	Serves func(host string) bool
	// Exactly one of Local and ACME.
	Local *LocalCA
	ACME  *ACME
	// OrdersPerHour bounds the zone's orders (new and renewals) from an ACME CA; 0: no bound.
	// The local CA has no limits to protect: its signatures are not bounded.
	OrdersPerHour int
	// RenewCheckInterval is how often stored certificates are checked for renewal; zero is
	// certmagic's default (10 minutes). Tests with short-lived certificates shorten it.
	RenewCheckInterval time.Duration
	Log                *slog.Logger
}

// Manager obtains, caches and renews the edge's certificates.
type Manager struct {
	cfg   *certmagic.Config
	cache *certmagic.Cache
	acme  *certmagic.ACMEIssuer
}

// New makes a Manager. Certificates are obtained on demand, at the first handshake that names
// a host the edge serves.
func New(o Options) (*Manager, error) {
	if o.Storage == nil || o.Serves == nil || (o.Local == nil) == (o.ACME == nil) {
		return nil, errors.New("certs: storage, Serves and exactly one issuer are needed")
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	zl := zapToSlog(log.With("component", "certmagic"))
	var cfg *certmagic.Config
	cache := certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   func(certmagic.Certificate) (*certmagic.Config, error) { return cfg, nil },
		RenewCheckInterval: o.RenewCheckInterval,
		OCSPCheckInterval:  o.RenewCheckInterval,
		Logger:             zl,
	})
	cfg = certmagic.New(cache, certmagic.Config{
		RenewalWindowRatio: RenewalWindowRatio,
		Storage:            o.Storage,
		Logger:             zl,
		OnEvent:            newEvents(ordersPerHour(o), o.Storage).on,
		OnDemand: &certmagic.OnDemandConfig{
			DecisionFunc: func(_ context.Context, name string) error {
				if !o.Serves(strings.ToLower(name)) {
					return ErrNotServed
				}
				return nil
			},
		},
	})
	m := &Manager{cfg: cfg, cache: cache}
	if o.Local != nil {
		cfg.Issuers = []certmagic.Issuer{o.Local}
		return m, nil
	}
	if o.ACME.Directory == "" {
		cache.Stop()
		return nil, errors.New("certs: the ACME directory URL is empty")
	}
	m.acme = certmagic.NewACMEIssuer(cfg, certmagic.ACMEIssuer{
		CA:                      o.ACME.Directory,
		TestCA:                  o.ACME.Directory,
		Email:                   o.ACME.Email,
		Agreed:                  true,
		TrustedRoots:            o.ACME.Roots,
		ListenHost:              o.ACME.ListenHost,
		AltHTTPPort:             o.ACME.HTTPPort,
		AltTLSALPNPort:          o.ACME.TLSPort,
		DisableHTTPChallenge:    o.ACME.NoHTTP01,
		DisableTLSALPNChallenge: o.ACME.NoTLSALPN01,
		Logger:                  zl,
	})
	cfg.Issuers = []certmagic.Issuer{m.acme}
	return m, nil
}

func ordersPerHour(o Options) int {
	if o.ACME == nil {
		return 0
	}
	return o.OrdersPerHour
}

// TLSConfig is the edge's TLS: certificates on demand, HTTP/2 and HTTP/1.1, and the
// TLS-ALPN-01 challenge answered in the handshake.
func (m *Manager) TLSConfig() *tls.Config {
	c := m.cfg.TLSConfig()
	c.MinVersion = tls.VersionTLS12
	c.NextProtos = append([]string{"h2", "http/1.1"}, c.NextProtos...)
	return c
}

// HandleHTTPChallenge answers an HTTP-01 challenge request (true) or leaves it (false).
func (m *Manager) HandleHTTPChallenge(w http.ResponseWriter, r *http.Request) bool {
	if m.acme == nil {
		return false
	}
	return m.acme.HandleHTTPChallenge(w, r)
}

// Certificate is the certificate held for name, obtaining it if there is none yet (as a
// handshake would; for tests and warm-up).
func (m *Manager) Certificate(ctx context.Context, name string) (*x509.Certificate, error) {
	c, err := m.cfg.GetCertificateWithContext(ctx, &tls.ClientHelloInfo{ServerName: name})
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil {
		return nil, fmt.Errorf("certs: no leaf for %s", name)
	}
	return c.Leaf, nil
}

// Stop ends the background renewal.
func (m *Manager) Stop() { m.cache.Stop() }
