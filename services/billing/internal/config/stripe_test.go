package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

func stripeEnv(over map[string]string) map[string]string {
	env := map[string]string{
		"GATEWAY_SIGNING_KEY":         "k",
		"STRIPE_SECRET_KEY":           "sk_test_secret-value-1",
		"STRIPE_WEBHOOK_SECRET":       "whsec_secret-value-2",
		"STRIPE_API_URL":              "http://127.0.0.1:12111",
		"STRIPE_PRICE_SONGBIRD_MONTH": "price_sm",
		"STRIPE_PRICE_SONGBIRD_YEAR":  "price_sy",
		"STRIPE_PRICE_FLOCK_MONTH":    "price_fm",
		"STRIPE_PRICE_FLOCK_YEAR":     "price_fy",
	}
	for k, v := range over {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return withCredentials(env)
}

func TestBillingIsOffUnlessBothSecretsAreSet(t *testing.T) {
	var cfg Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, withCredentials(map[string]string{"GATEWAY_SIGNING_KEY": "k"})); err != nil {
		t.Fatal(err)
	}
	if cfg.Stripe.Enabled() {
		t.Fatal("billing enabled without any Stripe setting")
	}
	if err := pkgconfig.LoadMap(context.Background(), &cfg, stripeEnv(nil)); err != nil || !cfg.Stripe.Enabled() {
		t.Fatalf("full Stripe settings: enabled %v, %v", cfg.Stripe.Enabled(), err)
	}
}

func TestStripeSettingsAreCheckedAtStart(t *testing.T) {
	cases := map[string]struct {
		over map[string]string
		want string
	}{
		"secret key without webhook secret": {map[string]string{"STRIPE_WEBHOOK_SECRET": ""}, "STRIPE_WEBHOOK_SECRET is required"},
		"webhook secret without secret key": {map[string]string{"STRIPE_SECRET_KEY": ""}, "STRIPE_SECRET_KEY is required"},
		"publishable key":                   {map[string]string{"STRIPE_SECRET_KEY": "pk_test_x"}, "STRIPE_SECRET_KEY must be"},
		"bad API URL":                       {map[string]string{"STRIPE_API_URL": "stripe-mock:12111"}, "STRIPE_API_URL"},
		"missing price":                     {map[string]string{"STRIPE_PRICE_FLOCK_YEAR": ""}, "STRIPE_PRICE_FLOCK_YEAR"},
		"product instead of price":          {map[string]string{"STRIPE_PRICE_SONGBIRD_MONTH": "prod_x"}, "STRIPE_PRICE_SONGBIRD_MONTH"},
		"bad VIES URL":                      {map[string]string{"VIES_URL": "ec.europa.eu"}, "VIES_URL"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var cfg Config
			err := pkgconfig.LoadMap(context.Background(), &cfg, stripeEnv(tc.over))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
			for _, secret := range []string{"secret-value-1", "secret-value-2"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error shows a secret: %v", err)
				}
			}
		})
	}
}

func TestDescribeNeverShowsTheStripeSecrets(t *testing.T) {
	var cfg Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, stripeEnv(nil)); err != nil {
		t.Fatal(err)
	}
	d := pkgconfig.Describe(&cfg)
	if d["STRIPE_SECRET_KEY"] != "set" || d["STRIPE_WEBHOOK_SECRET"] != "set" || d["STRIPE_PRICE_FLOCK_MONTH"] != "price_fm" {
		t.Fatalf("described %v", d)
	}
}
