package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// TLSOff, as EDGE_TLS_ADDR, turns the edge's TLS listener off: the edge then serves plain
// HTTP on EDGE_ADDR as before, with no redirect (tests of other parts of the zone use it).
const TLSOff = "off"

// EdgeTLS is the edge's HTTPS (services/zoneagent/README.md, "HTTPS at the edge").
type EdgeTLS struct {
	// TLSAddr is where the edge serves HTTPS; "off": no TLS listener and no redirect.
	TLSAddr string `env:"EDGE_TLS_ADDR, default=127.0.0.1:8443"`
	// PublicHTTPSPort is the port browsers reach the TLS listener on (http:// answers 308
	// there); 0: EDGE_TLS_ADDR's own port. 443 is left out of the redirect's address.
	PublicHTTPSPort int `env:"EDGE_PUBLIC_HTTPS_PORT"`
	// ACMECA is an ACME CA's directory URL; empty: the zone's local CA in DATA_DIR/tls.
	ACMECA string `env:"ZONE_ACME_CA"`
	// ACMECARoot is a PEM file of roots trusted for the ACME CA's own API (tests: Pebble's);
	// empty: the system's.
	ACMECARoot string `env:"ZONE_ACME_CA_ROOT"`
	// ACMEChallenges are the challenge types the edge answers (http-01, tls-alpn-01).
	ACMEChallenges []string `env:"ZONE_ACME_CHALLENGES, default=http-01,tls-alpn-01"`
	// ACMEEmail is the ACME account's contact; optional.
	ACMEEmail string `env:"ZONE_ACME_EMAIL"`
	// StorageKey seals the zone's certificate keys in its schema (base64 of 32 bytes, written
	// by bin/bootstrap to the zone agent's secrets file). Every edge of a zone has the same.
	StorageKey string `env:"ZONE_TLS_STORAGE_KEY" secret:"true"`
	// ACMEOrdersPerHour bounds the zone's certificate orders, new and renewals, a quarter
	// kept for renewals (Let's Encrypt allows 300 new orders per account in 3 hours); 0: no
	// bound.
	ACMEOrdersPerHour int `env:"ZONE_ACME_ORDERS_PER_HOUR, default=100"`
	// ACMENewOrdersPerAccountPerDay caps one account's new orders over any 24 hours, so one
	// customer's churn of hostnames cannot use the zone's budget up; renewals never count;
	// 0: no cap.
	ACMENewOrdersPerAccountPerDay int `env:"ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY, default=20"`
	// Wildcard is "dns01" for one certificate for every <slug>.<APPS_DOMAIN> from the ACME CA
	// by DNS-01, through DNS01Hook, or "local" for one signed by the zone's local CA (no
	// ZONE_ACME_CA): a restart then loads one certificate, not one per app (docs/scale.md);
	// empty: per-host certificates on demand.
	Wildcard string `env:"ZONE_TLS_WILDCARD"`
	// DNS01Hook is the operator's command that publishes and removes DNS-01 TXT records
	// (certs.DNS01Hook: `HOOK present|cleanup <name> <value>`); it sees only PATH, HOME and
	// ZONE_TLS_DNS01_* of the agent's environment.
	DNS01Hook string `env:"ZONE_TLS_DNS01_HOOK"`
	// RenewCheckInterval is how often held certificates are checked for renewal.
	RenewCheckInterval time.Duration `env:"ZONE_TLS_RENEW_CHECK_INTERVAL, default=10m"`
}

// TLSEnabled reports whether the edge serves HTTPS.
func (t *EdgeTLS) TLSEnabled() bool { return t.TLSAddr != TLSOff && t.TLSAddr != "" }

// HTTPSPort is the public port http:// redirects to.
func (t *EdgeTLS) HTTPSPort() int {
	if t.PublicHTTPSPort != 0 {
		return t.PublicHTTPSPort
	}
	_, p, _ := net.SplitHostPort(t.TLSAddr)
	n, _ := strconv.Atoi(p)
	return n
}

// Challenge reports whether the edge answers the ACME challenge type c.
func (t *EdgeTLS) Challenge(c string) bool { return slices.Contains(t.ACMEChallenges, c) }

// StorageKeyBytes is the decoded ZONE_TLS_STORAGE_KEY.
func (t *EdgeTLS) StorageKeyBytes() ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(t.StorageKey)
	if err != nil || len(k) != 32 {
		return nil, errors.New("ZONE_TLS_STORAGE_KEY must be the base64 of 32 bytes (bin/bootstrap writes it to DATA_DIR/secrets/zoneagent.env)")
	}
	return k, nil
}

func (t *EdgeTLS) validate() error {
	if !t.TLSEnabled() {
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(t.TLSAddr); err != nil {
		errs = append(errs, errors.New(`EDGE_TLS_ADDR must be host:port or "off"`))
	}
	if t.PublicHTTPSPort < 0 || t.PublicHTTPSPort > 65535 {
		errs = append(errs, errors.New("EDGE_PUBLIC_HTTPS_PORT must be a port"))
	}
	if t.ACMECA != "" {
		if u, err := url.Parse(t.ACMECA); err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, errors.New("ZONE_ACME_CA must be an https:// directory URL"))
		}
	} else if t.ACMECARoot != "" {
		errs = append(errs, errors.New("ZONE_ACME_CA_ROOT needs ZONE_ACME_CA"))
	}
	if _, err := t.StorageKeyBytes(); err != nil {
		errs = append(errs, err)
	}
	if !t.Challenge("http-01") && !t.Challenge("tls-alpn-01") {
		errs = append(errs, errors.New("ZONE_ACME_CHALLENGES must name http-01, tls-alpn-01 or both"))
	}
	for _, c := range t.ACMEChallenges {
		if c != "http-01" && c != "tls-alpn-01" {
			errs = append(errs, fmt.Errorf("ZONE_ACME_CHALLENGES: %q is not http-01 or tls-alpn-01", c))
		}
	}
	if t.ACMEOrdersPerHour < 0 {
		errs = append(errs, errors.New("ZONE_ACME_ORDERS_PER_HOUR must not be negative"))
	}
	switch {
	case t.Wildcard != "" && t.Wildcard != "dns01" && t.Wildcard != "local":
		errs = append(errs, fmt.Errorf("ZONE_TLS_WILDCARD: %q is not dns01 or local (or empty)", t.Wildcard))
	case t.Wildcard == "local" && t.ACMECA != "":
		errs = append(errs, errors.New("ZONE_TLS_WILDCARD=local is the local CA's: it cannot go with ZONE_ACME_CA"))
	case t.Wildcard == "dns01" && (t.ACMECA == "" || t.DNS01Hook == ""):
		errs = append(errs, errors.New("ZONE_TLS_WILDCARD=dns01 needs ZONE_ACME_CA and ZONE_TLS_DNS01_HOOK"))
	}
	if t.ACMENewOrdersPerAccountPerDay < 0 {
		errs = append(errs, errors.New("ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY must not be negative"))
	}
	if t.RenewCheckInterval < time.Second {
		errs = append(errs, errors.New("ZONE_TLS_RENEW_CHECK_INTERVAL must be at least 1s"))
	}
	return errors.Join(errs...)
}
