// Package config is billing's configuration, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"tori.dev/pkg/bus"
)

// Config is the billing service's configuration.
type Config struct {
	// Addr is where the HTTP API listens; only the gateway should reach it.
	Addr string `env:"BILLING_ADDR, default=127.0.0.1:8102"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY" secret:"true"`
	// ShutdownTimeout bounds how long in-flight requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"BILLING_SHUTDOWN_TIMEOUT, default=10s"`
	// HoldNoticeEvery is how often the payment-failure holds are checked for notices (mails)
	// that are due.
	HoldNoticeEvery time.Duration `env:"BILLING_HOLD_NOTICE_EVERY, default=1m"`
	// VATRecheckEvery is how often VAT IDs VIES could not check are asked about again.
	VATRecheckEvery time.Duration `env:"BILLING_VAT_RECHECK_EVERY, default=1h"`
	// VATTermsEvery is how often subscriptions whose VAT terms changed (the customer's
	// country or VAT ID, the plan) have them applied at the provider.
	VATTermsEvery time.Duration `env:"BILLING_VAT_TERMS_EVERY, default=1m"`

	// Stripe is the payment provider; unset, paid plans are off.
	Stripe
	Infra
}

// Infra is what both the service and the operator commands use: the database and the bus.
type Infra struct {
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"BILLING_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"BILLING_AMQP_URL"`

	bus.Config
}

// Validate checks the service's configuration.
func (c *Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("BILLING_ADDR %q is not host:port", c.Addr))
	}
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("BILLING_SHUTDOWN_TIMEOUT must be positive"))
	}
	if c.HoldNoticeEvery <= 0 {
		errs = append(errs, errors.New("BILLING_HOLD_NOTICE_EVERY must be positive"))
	}
	if c.VATTermsEvery <= 0 {
		errs = append(errs, errors.New("BILLING_VAT_TERMS_EVERY must be positive"))
	}
	if c.VATRecheckEvery <= 0 {
		errs = append(errs, errors.New("BILLING_VAT_RECHECK_EVERY must be positive"))
	}
	if err := c.Stripe.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Infra.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Validate checks the database and bus settings.
func (c *Infra) Validate() error {
	var errs []error
	u, err := url.Parse(c.DatabaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("BILLING_DATABASE_URL must be a postgres:// URL (bin/bootstrap writes it to DATA_DIR/secrets/billing.env)"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the service's own broker user.
func (c *Infra) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }
