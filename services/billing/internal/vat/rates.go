// Package vat decides the VAT of a sale: the seller is Czech, listed prices include VAT for
// consumers. Rules and the rate table only; the VAT-ID check against VIES is behind the VIES
// interface. Nothing here does I/O.
package vat

import "time"

// Rates is a dated table of the EU member states' standard VAT rates, in basis points
// (2100 is 21 %), keyed by ISO 3166-1 alpha-2 country code (Greece is GR here; its VAT IDs
// start with EL).
type Rates struct {
	// AsOf is the day the table was last checked against the European Commission's
	// "VAT rates applied in the Member States" list. A rate change after it needs a new table.
	AsOf  time.Time
	Basis map[string]int64
}

// Standard is the table in force. Changes since the previous check: Romania 19 → 21 % on
// 2025-08-01, Estonia 22 → 24 % on 2025-07-01, Slovakia 20 → 23 % on 2025-01-01, Finland
// 24 → 25.5 % on 2024-09-01.
var Standard = Rates{
	AsOf: time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC),
	Basis: map[string]int64{
		"AT": 2000, "BE": 2100, "BG": 2000, "HR": 2500, "CY": 1900, "CZ": 2100, "DK": 2500,
		"EE": 2400, "FI": 2550, "FR": 2000, "DE": 1900, "GR": 2400, "HU": 2700, "IE": 2300,
		"IT": 2200, "LV": 2100, "LT": 2100, "LU": 1700, "MT": 1800, "NL": 2100, "PL": 2300,
		"PT": 2300, "RO": 2100, "SK": 2300, "SI": 2200, "ES": 2100, "SE": 2500,
	},
}

// Seller is the seller's country; its rate is the one a reverse-charge price is net of.
const Seller = "CZ"

// InEU reports whether country is an EU member state.
func (r Rates) InEU(country string) bool {
	_, ok := r.Basis[country]
	return ok
}
