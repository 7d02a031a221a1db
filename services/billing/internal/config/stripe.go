package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Stripe is the payment provider's configuration. Billing is configured (paid plans on) only
// when both secrets are set; unset, the default, billing answers exactly as the contract says
// for configured: false.
type Stripe struct {
	// SecretKey is the Stripe API key (sk_ or rk_); set, paid plans are on.
	SecretKey string `env:"STRIPE_SECRET_KEY" secret:"true"`
	// WebhookSecret checks the signature of Stripe's webhook calls.
	WebhookSecret string `env:"STRIPE_WEBHOOK_SECRET" secret:"true"`
	// APIURL points the client at another server, such as stripe-mock in tests.
	APIURL string `env:"STRIPE_API_URL"`
	// PriceSongbirdMonth … PriceFlockYear are the Stripe price ids (price_…) of each paid
	// plan and period, required when billing is enabled.
	PriceSongbirdMonth string `env:"STRIPE_PRICE_SONGBIRD_MONTH"`
	PriceSongbirdYear  string `env:"STRIPE_PRICE_SONGBIRD_YEAR"`
	PriceFlockMonth    string `env:"STRIPE_PRICE_FLOCK_MONTH"`
	PriceFlockYear     string `env:"STRIPE_PRICE_FLOCK_YEAR"`
	// VIESURL is the VIES check-vat-number endpoint VAT IDs are checked with.
	VIESURL string `env:"VIES_URL, default=https://ec.europa.eu/taxation_customs/vies/rest-api/check-vat-number"`
	// VIESTimeout bounds one VIES check; past it the format check stands in.
	VIESTimeout time.Duration `env:"VIES_TIMEOUT, default=10s"`
	// ConsoleURL is where checkout and the portal send the customer back.
	ConsoleURL string `env:"CONSOLE_URL, default=http://127.0.0.1:5173"`
}

// Enabled reports whether paid plans are on.
func (s Stripe) Enabled() bool { return s.SecretKey != "" || s.WebhookSecret != "" }

// Validate checks the settings when billing is enabled; nothing is required when it is not.
// Errors name the variables, never their values.
func (s Stripe) Validate() error {
	if !s.Enabled() {
		return nil
	}
	var errs []error
	if s.SecretKey == "" {
		errs = append(errs, errors.New("STRIPE_SECRET_KEY is required when STRIPE_WEBHOOK_SECRET is set"))
	} else if !strings.HasPrefix(s.SecretKey, "sk_") && !strings.HasPrefix(s.SecretKey, "rk_") {
		errs = append(errs, errors.New("STRIPE_SECRET_KEY must be a secret (sk_) or restricted (rk_) key"))
	}
	if s.WebhookSecret == "" {
		errs = append(errs, errors.New("STRIPE_WEBHOOK_SECRET is required when STRIPE_SECRET_KEY is set"))
	}
	if s.APIURL != "" {
		if u, err := url.Parse(s.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("STRIPE_API_URL must be an http(s) URL"))
		}
	}
	for name, v := range map[string]string{
		"STRIPE_PRICE_SONGBIRD_MONTH": s.PriceSongbirdMonth, "STRIPE_PRICE_SONGBIRD_YEAR": s.PriceSongbirdYear,
		"STRIPE_PRICE_FLOCK_MONTH": s.PriceFlockMonth, "STRIPE_PRICE_FLOCK_YEAR": s.PriceFlockYear,
	} {
		if !strings.HasPrefix(v, "price_") {
			errs = append(errs, fmt.Errorf("%s must be a Stripe price id (price_...) when billing is enabled", name))
		}
	}
	if u, err := url.Parse(s.VIESURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, errors.New("VIES_URL must be an http(s) URL"))
	}
	if s.VIESTimeout <= 0 {
		errs = append(errs, errors.New("VIES_TIMEOUT must be positive"))
	}
	if u, err := url.Parse(s.ConsoleURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, errors.New("CONSOLE_URL must be an http(s) URL"))
	}
	return errors.Join(errs...)
}
