package vat

import (
	"context"
	"testing"
)

// Every branch of the rule, with a songbird month (9.00 € listed) and a flock year (290.00 €).
func TestDecideAndCharge(t *testing.T) {
	vies := FakeVIES{Valid: map[string]bool{"DE123456789": true, "CZ12345678": true, "FR12345678901": true}}
	cases := []struct {
		name      string
		country   string
		business  bool
		vatID     string
		kind      Kind
		rate      int64
		listed    int64
		total     int64
		vat       int64
		reverse   bool
		formatOut bool
	}{
		{"consumer in Germany pays German VAT, included", "DE", false, "", EUConsumer, 1900, 900, 900, 144, false, false},
		{"German business with a valid VAT ID: reverse charge", "DE", true, "DE123456789", ReverseCharge, 0, 900, 744, 0, true, false},
		{"German business with an invalid VAT ID pays German VAT", "DE", true, "DE999999999", EUConsumer, 1900, 900, 900, 144, false, false},
		{"German business with a malformed VAT ID pays German VAT", "DE", true, "DE12", EUConsumer, 1900, 900, 900, 144, false, false},
		{"German business with a Czech VAT ID pays German VAT", "DE", true, "CZ12345678", EUConsumer, 1900, 900, 900, 144, false, false},
		{"Czech business with a VAT ID pays Czech VAT", "CZ", true, "CZ12345678", Domestic, 2100, 900, 900, 156, false, false},
		{"Czech business without a VAT ID pays Czech VAT", "CZ", true, "", Domestic, 2100, 900, 900, 156, false, false},
		{"Czech consumer pays Czech VAT", "CZ", false, "", Domestic, 2100, 29000, 29000, 5033, false, false},
		{"customer outside the EU pays the listed price without VAT", "US", false, "", OutsideEU, 0, 900, 900, 0, false, false},
		{"business outside the EU pays the listed price without VAT", "CH", true, "CHE123456789", OutsideEU, 0, 29000, 29000, 0, false, false},
		{"French business, reverse charge on a yearly flock", "FR", true, "FR12345678901", ReverseCharge, 0, 29000, 23967, 0, true, false},
		{"Finnish consumer pays 25.5 %", "FI", false, "", EUConsumer, 2550, 900, 900, 183, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Customer{Country: tc.country, Business: tc.business, VATID: tc.vatID}
			if tc.vatID != "" {
				v, err := Validate(context.Background(), vies, tc.vatID, tc.country)
				if err != nil {
					t.Fatal(err)
				}
				c.VATIDValid = v.Valid
			}
			tr, err := Decide(c, Standard)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Kind != tc.kind || tr.RateBasis != tc.rate || tr.ReverseCharge() != tc.reverse {
				t.Fatalf("treatment %+v, want %s at %d", tr, tc.kind, tc.rate)
			}
			total, vat := tr.Charge(tc.listed, Standard)
			if total != tc.total || vat != tc.vat {
				t.Fatalf("charge %d: total %d vat %d, want %d and %d", tc.listed, total, vat, tc.total, tc.vat)
			}
		})
	}
}

func TestUnknownCountryDecidesNothing(t *testing.T) {
	if _, err := Decide(Customer{Business: true, VATID: "DE123456789", VATIDValid: true}, Standard); err != ErrUnknownCountry {
		t.Fatalf("got %v", err)
	}
}

// VIES down: the format check stands in, and says so, so the ID is checked again later.
func TestValidateWhileVIESIsDown(t *testing.T) {
	down := FakeVIES{Down: true}
	cases := []struct {
		id, country string
		want        Validation
	}{
		{"DE123456789", "DE", Validation{Valid: true, FormatOnly: true}},
		{"de 123-456.789", "DE", Validation{Valid: true, FormatOnly: true}},
		{"DE12345", "DE", Validation{Valid: false}},
		{"EL123456789", "GR", Validation{Valid: true, FormatOnly: true}},
		{"GR123456789", "GR", Validation{Valid: false}},
		{"ATU12345678", "AT", Validation{Valid: true, FormatOnly: true}},
		{"LU12345678", "LU", Validation{Valid: true, FormatOnly: true}},
		{"", "DE", Validation{Valid: false}},
	}
	for _, tc := range cases {
		got, err := Validate(context.Background(), down, tc.id, tc.country)
		if err != nil || got != tc.want {
			t.Errorf("Validate(%q, %s) = %+v, %v; want %+v", tc.id, tc.country, got, err, tc.want)
		}
	}
}

func TestTheRateTableIsDatedAndCoversTheMemberStates(t *testing.T) {
	if Standard.AsOf.IsZero() {
		t.Fatal("the rate table has no date")
	}
	if len(Standard.Basis) != 27 {
		t.Fatalf("%d member states, want 27", len(Standard.Basis))
	}
	for c, r := range Standard.Basis {
		if r < 1500 || r > 2700 {
			t.Errorf("%s at %d basis points is below the EU minimum or above the highest rate", c, r)
		}
	}
}
