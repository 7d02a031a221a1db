// Package config is the apps service's one configuration struct, read from the environment.
// Names and defaults follow decisions.md ("Running it") and docs/conventions.md, so that
// `make run` works with nothing set but the gateway's signing key.
package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode"

	"tori.dev/pkg/bus"
)

// Config is everything the apps service reads from its environment.
type Config struct {
	// Addr is where the service listens; only the gateway should reach it.
	Addr string `env:"APPS_ADDR, default=127.0.0.1:8103"`
	// ShutdownTimeout bounds how long in-flight HTTP requests may finish after a stop.
	ShutdownTimeout time.Duration `env:"APPS_SHUTDOWN_TIMEOUT, default=10s"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"APPS_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"APPS_AMQP_URL"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY, required" secret:"true"`
	// AppsDomain is {apps_domain}: app URLs are https://<slug>.<AppsDomain>, and custom
	// hostnames under it are refused.
	AppsDomain string `env:"APPS_DOMAIN, default=apps.localhost"`
	// DataDir holds the local keyring (keyring.json) when Vault is not configured.
	DataDir string `env:"DATA_DIR, default=./var"`

	// Vault transit encrypts environment values when VaultAddr is set.
	VaultAddr  string `env:"VAULT_ADDR"`
	VaultToken string `env:"VAULT_TOKEN" secret:"true"`
	// VaultTransitMount is the path the transit engine is mounted at.
	VaultTransitMount string `env:"VAULT_TRANSIT_MOUNT, default=transit"`
	// VaultTransitKey is the transit key's name; it must be a derived key (created if missing).
	VaultTransitKey string `env:"VAULT_TRANSIT_KEY, default=tori-env"`

	// DNSResolver is host:port of the DNS server custom-hostname checks ask; empty means the
	// system resolver.
	DNSResolver string `env:"DNS_RESOLVER"`
	// DomainCheckInterval is how often the checker runs, and so how often pending hostnames
	// have their TXT record looked up.
	DomainCheckInterval time.Duration `env:"DOMAIN_CHECK_INTERVAL, default=30s"`
	// DomainPendingTTL is how long a claim may stay pending before it is removed and the
	// hostname is free again.
	DomainPendingTTL time.Duration `env:"DOMAIN_PENDING_TTL, default=168h"`
	// DomainRecheckInterval is how often an active hostname's TXT record is looked up again.
	DomainRecheckInterval time.Duration `env:"DOMAIN_RECHECK_INTERVAL, default=24h"`
	// DomainMissingCheckInterval is how often an active hostname whose record is missing is
	// looked up, so a record put back clears the miss soon.
	DomainMissingCheckInterval time.Duration `env:"DOMAIN_MISSING_CHECK_INTERVAL, default=1h"`
	// DomainMissingGrace is how long an active hostname's record may be missing before the
	// hostname goes back to pending and stops being served.
	DomainMissingGrace time.Duration `env:"DOMAIN_MISSING_GRACE, default=72h"`
	// DomainCheckParallel bounds the look-ups in flight at once.
	DomainCheckParallel int `env:"DOMAIN_CHECK_PARALLEL, default=8"`
	// DomainLookupTimeout bounds each look-up.
	DomainLookupTimeout time.Duration `env:"DOMAIN_LOOKUP_TIMEOUT, default=5s"`

	// CleanupServices lists the services that keep data of an app and must confirm its
	// cleanup (<service>.app.cleaned) before a deleted app's slug is reclaimed, separated by
	// commas or spaces (a space in the default: the tag itself is comma-separated).
	CleanupServices string `env:"APPS_CLEANUP_SERVICES, default=logs deploys databases"`

	// ZoneEU and ZoneUS are each region's default zone, given to new apps.
	ZoneEU string `env:"ZONE_EU, default=local"`
	ZoneUS string `env:"ZONE_US, default=local"`

	bus.Config
}

// UseVault reports whether environment values go through Vault transit.
func (c Config) UseVault() bool { return c.VaultAddr != "" }

// Zones maps each region to its default zone.
func (c Config) Zones() map[string]string {
	return map[string]string{"eu": c.ZoneEU, "us": c.ZoneUS}
}

// Cleanup returns the cleanup set without blanks; APPS_CLEANUP_SERVICES="" means none.
func (c Config) Cleanup() []string {
	return strings.FieldsFunc(c.CleanupServices, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// Validate checks what the defaults cannot guarantee.
func (c Config) Validate() error {
	var errs []error
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("APPS_ADDR: %w", err))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("APPS_SHUTDOWN_TIMEOUT must be positive"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("APPS_DATABASE_URL is required (bin/bootstrap writes it to DATA_DIR/secrets/apps.env)"))
	}
	if c.AppsDomain == "" || strings.ContainsAny(c.AppsDomain, "/: ") {
		errs = append(errs, fmt.Errorf("APPS_DOMAIN must be a bare domain name, not %q", c.AppsDomain))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("DATA_DIR is required"))
	}
	if c.UseVault() {
		if c.VaultToken == "" {
			errs = append(errs, errors.New("VAULT_TOKEN is required when VAULT_ADDR is set"))
		}
		if c.VaultTransitMount == "" || c.VaultTransitKey == "" {
			errs = append(errs, errors.New("VAULT_TRANSIT_MOUNT and VAULT_TRANSIT_KEY must not be empty"))
		}
	}
	if c.DNSResolver != "" {
		if _, _, err := net.SplitHostPort(c.DNSResolver); err != nil {
			errs = append(errs, fmt.Errorf("DNS_RESOLVER must be host:port: %w", err))
		}
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"DOMAIN_CHECK_INTERVAL", c.DomainCheckInterval}, {"DOMAIN_PENDING_TTL", c.DomainPendingTTL},
		{"DOMAIN_RECHECK_INTERVAL", c.DomainRecheckInterval}, {"DOMAIN_MISSING_CHECK_INTERVAL", c.DomainMissingCheckInterval},
		{"DOMAIN_MISSING_GRACE", c.DomainMissingGrace}, {"DOMAIN_LOOKUP_TIMEOUT", c.DomainLookupTimeout},
	} {
		if d.d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", d.name))
		}
	}
	if c.DomainCheckParallel < 1 || c.DomainCheckParallel > 256 {
		errs = append(errs, errors.New("DOMAIN_CHECK_PARALLEL must be between 1 and 256"))
	}
	for _, s := range c.Cleanup() {
		if strings.ContainsAny(s, ".*# ") {
			errs = append(errs, fmt.Errorf("APPS_CLEANUP_SERVICES: %q is not a service name", s))
		}
	}
	if c.ZoneEU == "" || c.ZoneUS == "" {
		errs = append(errs, errors.New("ZONE_EU and ZONE_US must not be empty"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the service's own broker user.
func (c Config) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }
