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
	"sync"
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
	// OrdersPerHour bounds the zone's orders (new and renewals) from an ACME CA, a share of it
	// (RenewalShare) kept for renewals; 0: no bound. The local CA has no limits to protect:
	// its signatures are not bounded.
	OrdersPerHour int
	// NewOrdersPerAccountPerDay caps one account's new orders from an ACME CA over any 24
	// hours (Owner names the account of a hostname); renewals never count; 0: no cap.
	NewOrdersPerAccountPerDay int
	// Owner names the app and account a served hostname belongs to, and whether it is a
	// custom hostname; nil: no per-account bound and no state reported.
	Owner func(ctx context.Context, host string) (Owner, bool)
	// OnState is told each change of a custom hostname's certificate state (Next).
	OnState func(ctx context.Context, host string, o Owner, s State, at time.Time)
	// Wildcard is one certificate for every <slug>.<APPS_DOMAIN> (`*.apps.example.com`):
	// with an ACME CA ordered ahead by DNS-01 through DNS01Hook, with the local CA signed at
	// once; those names are then never ordered one by one. Empty: per-host certificates on
	// demand.
	Wildcard  string
	DNS01Hook string
	// PreviewWildcard is `*.<PREVIEWS_DOMAIN>`, the one certificate previews are served
	// with (previews.go): signed at once by the local CA; with an ACME CA ordered by DNS-01
	// beside Wildcard, and ignored without it (preview hosts are then ordered on demand as
	// served hosts are).
	PreviewWildcard string
	// RenewCheckInterval is how often stored certificates are checked for renewal; zero is
	// certmagic's default (10 minutes). Tests with short-lived certificates shorten it.
	RenewCheckInterval time.Duration
	Log                *slog.Logger
}

// Owner is whose a served hostname is.
type Owner struct {
	AppID, AccountID string
	// Custom is a customer's own hostname (not <slug>.<APPS_DOMAIN>).
	Custom bool
}

// Manager obtains, caches and renews the edge's certificates.
type Manager struct {
	cfg   *certmagic.Config
	cache *certmagic.Cache
	acme  *certmagic.ACMEIssuer
	// managed is cfg without on demand: the hostnames Keep names are ordered at once, with
	// certmagic's retry and backoff, not at their first handshake.
	managed *certmagic.Config
	// wild orders the wildcard certificate by DNS-01 (Options.Wildcard).
	wild     *certmagic.Config
	wildcard string
	// previewWild is the previews' wildcard when this manager serves one (previews.go).
	previewWild string
	stopWild    context.CancelFunc
	events      *events
	mu          sync.Mutex
	kept        map[string]context.CancelFunc
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
	ev := newEvents(o)
	m := &Manager{events: ev, kept: map[string]context.CancelFunc{}, previewWild: previewWildcard(o)}
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
		OnEvent:            ev.on,
		OnDemand: &certmagic.OnDemandConfig{
			DecisionFunc: func(_ context.Context, name string) error {
				if !o.Serves(strings.ToLower(name)) || wildcardCovers(o.Wildcard, name) || wildcardCovers(m.previewWild, name) {
					return ErrNotServed
				}
				return nil
			},
		},
	})
	m.cfg, m.cache = cfg, cache
	ev.cache = cache
	ev.kept = m.isKept
	m.managed = certmagic.New(cache, certmagic.Config{
		RenewalWindowRatio: RenewalWindowRatio,
		Storage:            o.Storage,
		Logger:             zl,
		OnEvent:            ev.on,
	})
	if o.Local != nil {
		cfg.Issuers = []certmagic.Issuer{o.Local}
		m.managed.Issuers = cfg.Issuers
		m.wildcard = strings.ToLower(o.Wildcard)
		if err := m.keepLocalWildcards(); err != nil { // previews.go
			cache.Stop()
			return nil, err
		}
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
	m.managed.Issuers = cfg.Issuers
	if o.Wildcard != "" {
		if o.DNS01Hook == "" {
			cache.Stop()
			return nil, errors.New("certs: a wildcard certificate needs a DNS-01 hook")
		}
		m.wildcard = strings.ToLower(o.Wildcard)
		m.wild = certmagic.New(cache, certmagic.Config{
			RenewalWindowRatio: RenewalWindowRatio,
			Storage:            o.Storage,
			Logger:             zl,
			OnEvent:            ev.on,
		})
		m.wild.Issuers = []certmagic.Issuer{certmagic.NewACMEIssuer(m.wild, certmagic.ACMEIssuer{
			CA:                      o.ACME.Directory,
			TestCA:                  o.ACME.Directory,
			Email:                   o.ACME.Email,
			Agreed:                  true,
			TrustedRoots:            o.ACME.Roots,
			DNS01Solver:             DNS01Hook{Command: o.DNS01Hook},
			DisableHTTPChallenge:    true,
			DisableTLSALPNChallenge: true,
			Logger:                  zl,
		})}
		ctx, cancel := context.WithCancel(context.Background())
		m.stopWild = cancel
		// Ordered now, retried with certmagic's backoff, renewed by the cache.
		if err := m.wild.ManageAsync(ctx, m.wildcards()); err != nil {
			cancel()
			cache.Stop()
			return nil, err
		}
	}
	return m, nil
}

func (m *Manager) isKept(host string) bool {
	if host != "" && (host == m.wildcard || host == m.previewWild) {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.kept[host]
	return ok
}

// Keep makes hosts the hostnames ordered ahead of any handshake (the customers' own, once
// active): a new one is ordered at once, a failed order is retried with certmagic's backoff
// (1, 2, 2, 5, 10 minutes … up to 6 hours apart, for 30 days), and a hostname no longer
// named stops being retried and leaves the cache.
func (m *Manager) Keep(hosts []string) {
	want := make(map[string]bool, len(hosts))
	m.mu.Lock()
	for _, h := range hosts {
		h = strings.ToLower(h)
		want[h] = true
		if _, ok := m.kept[h]; !ok {
			ctx, cancel := context.WithCancel(context.Background())
			m.kept[h] = cancel
			if err := m.managed.ManageAsync(ctx, []string{h}); err != nil {
				cancel()
				delete(m.kept, h)
			}
		}
	}
	var gone []certmagic.SubjectIssuer
	for h, cancel := range m.kept {
		if !want[h] {
			cancel()
			delete(m.kept, h)
			m.events.forget(h)
			gone = append(gone, certmagic.SubjectIssuer{Subject: h})
		}
	}
	m.mu.Unlock()
	if len(gone) > 0 {
		m.cache.RemoveManaged(gone)
	}
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

// Stop ends the background renewal and the retries of Keep's hostnames.
func (m *Manager) Stop() {
	m.mu.Lock()
	for h, cancel := range m.kept {
		cancel()
		delete(m.kept, h)
	}
	m.mu.Unlock()
	if m.stopWild != nil {
		m.stopWild()
	}
	m.cache.Stop()
}
