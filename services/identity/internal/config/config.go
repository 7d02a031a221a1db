// Package config is the identity service's one configuration struct, read from the
// environment. Names and defaults follow decisions.md ("Running it") and
// docs/conventions.md, so that `make run` works with no variable set but the signing key.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/profiling"
)

// Config is everything the identity service reads from its environment.
type Config struct {
	// Addr is where the service listens; only the gateway should reach it.
	Addr string `env:"IDENTITY_ADDR, default=127.0.0.1:8101"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"IDENTITY_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"IDENTITY_AMQP_URL"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY, required" secret:"true"`
	// ConsoleURL is where magic links and the device flow's verification page point.
	ConsoleURL string `env:"CONSOLE_URL, default=http://127.0.0.1:5173"`
	// BaseURL is the public API's address ({base_url}); kept for links that must name the
	// API rather than the console. None does yet.
	BaseURL string `env:"BASE_URL, default=http://127.0.0.1:8080"`
	// SMTPURL is smtp://[user:password@]host:port; unset, mail goes to files under DataDir.
	SMTPURL string `env:"SMTP_URL"`
	// MailFrom is the From header of sign-in mail.
	MailFrom string `env:"MAIL_FROM, default=Tori <no-reply@tori.localhost>"`
	// DataDir holds the mail files when SMTPURL is unset.
	DataDir string `env:"DATA_DIR, default=./var"`
	// ShutdownTimeout bounds how long in-flight requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"IDENTITY_SHUTDOWN_TIMEOUT, default=10s"`

	bus.Config
	// Profiles for profiling under load (PROFILE_ADDR, loopback only); off by default.
	Profiling profiling.Config
}

// Validate checks what the defaults cannot guarantee.
func (c Config) Validate() error {
	var errs []error
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("IDENTITY_ADDR: %w", err))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("IDENTITY_DATABASE_URL is required (bin/bootstrap writes it to DATA_DIR/secrets/identity.env)"))
	}
	for name, v := range map[string]string{"CONSOLE_URL": c.ConsoleURL, "BASE_URL": c.BaseURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s must be an absolute http(s) URL, not %q", name, v))
		}
	}
	if c.SMTPURL != "" {
		if _, err := ParseSMTPURL(c.SMTPURL); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := mail.ParseAddress(c.MailFrom); err != nil {
		errs = append(errs, fmt.Errorf("MAIL_FROM: %w", err))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("DATA_DIR is required"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("IDENTITY_SHUTDOWN_TIMEOUT must be positive"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Profiling.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SMTP is a parsed SMTP_URL.
type SMTP struct {
	Addr     string // host:port
	Username string
	Password string
}

// ParseSMTPURL reads smtp://[user:password@]host:port. The error never repeats the URL,
// which may hold a password.
func ParseSMTPURL(s string) (SMTP, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "smtp" || u.Hostname() == "" || u.Port() == "" {
		return SMTP{}, errors.New("SMTP_URL must look like smtp://[user:password@]host:port")
	}
	out := SMTP{Addr: u.Host}
	if u.User != nil {
		out.Username = u.User.Username()
		out.Password, _ = u.User.Password()
	}
	return out, nil
}

// BusConfig is the bus configuration with the service's own broker user.
func (c Config) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }
