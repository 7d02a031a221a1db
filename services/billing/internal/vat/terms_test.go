package vat

import "testing"

// What the provider is told to charge, per rule: a consumer's country's rate included in the
// listed price, a reverse-charge business the price less Czech VAT with no rate, a customer
// outside the EU the listed price with no rate.
func TestTermsFor(t *testing.T) {
	const listed = 2900 // flock, a month
	cases := []struct {
		name     string
		customer Customer
		want     Terms
	}{
		{"consumer in Germany", Customer{Country: "DE"}, Terms{Kind: EUConsumer, Country: "DE", RateBasis: 1900}},
		{"German business with a valid VAT ID", Customer{Country: "DE", Business: true, VATID: "DE123456789", VATIDValid: true},
			Terms{Kind: ReverseCharge, Country: "DE", DiscountCents: 2900 - 2397}},
		{"German business with an invalid VAT ID", Customer{Country: "DE", Business: true, VATID: "DE000", VATIDValid: false},
			Terms{Kind: EUConsumer, Country: "DE", RateBasis: 1900}},
		{"Czech business with a VAT ID", Customer{Country: "CZ", Business: true, VATID: "CZ12345678", VATIDValid: true},
			Terms{Kind: Domestic, Country: "CZ", RateBasis: 2100}},
		{"customer outside the EU", Customer{Country: "US"}, Terms{Kind: OutsideEU, Country: "US"}},
	}
	for _, c := range cases {
		tr, err := Decide(c.customer, Standard)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := TermsFor(tr, c.customer.Country, listed, Standard); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	a := Terms{Kind: EUConsumer, Country: "DE", RateBasis: 1900}
	if b := (Terms{Kind: EUConsumer, Country: "AT", RateBasis: 2000}); a.Key() == b.Key() {
		t.Fatal("two terms share a key")
	}
}
