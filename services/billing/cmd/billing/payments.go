package main

import (
	"strings"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/config"
	"tori.dev/services/billing/internal/stripepay"
	"tori.dev/services/billing/internal/usecase"
	"tori.dev/services/billing/internal/vies"
)

// paymentOptions turns paid plans on when Stripe is configured; unset, the service answers
// configured: false exactly as before paid plans existed.
func paymentOptions(s config.Stripe) []usecase.Option {
	if !s.Enabled() {
		return nil
	}
	return []usecase.Option{usecase.WithPayments(usecase.Payments{
		Provider: stripepay.New(stripepay.Config{SecretKey: s.SecretKey, APIURL: s.APIURL}),
		Events:   stripepay.Events{Secret: s.WebhookSecret},
		VIES:     vies.New(s.VIESURL, s.VIESTimeout),
		Prices: usecase.Prices{
			{Plan: catalog.Songbird, Interval: catalog.Monthly}: s.PriceSongbirdMonth,
			{Plan: catalog.Songbird, Interval: catalog.Yearly}:  s.PriceSongbirdYear,
			{Plan: catalog.Flock, Interval: catalog.Monthly}:    s.PriceFlockMonth,
			{Plan: catalog.Flock, Interval: catalog.Yearly}:     s.PriceFlockYear,
		},
		ConsoleURL: strings.TrimRight(s.ConsoleURL, "/"),
	})}
}
