package vat

import "fmt"

// Terms are how the payment provider must charge one subscription so that the customer pays
// what Decide says: the listed price stays the subscription's price; its invoices carry the
// VAT rate of the customer's country as a rate included in that price (RateBasis 0: none),
// and under reverse charge the Czech VAT is taken off the price (DiscountCents).
type Terms struct {
	Kind          Kind
	Country       string
	RateBasis     int64 // basis points, included in the price; 0 when no VAT is charged
	DiscountCents int64 // taken off every invoice; only under reverse charge
}

// TermsFor are the terms of a subscription at listedCents for a customer in country under t.
func TermsFor(t Treatment, country string, listedCents int64, rates Rates) Terms {
	terms := Terms{Kind: t.Kind, Country: country, RateBasis: t.RateBasis}
	if t.Kind == ReverseCharge {
		total, _ := t.Charge(listedCents, rates)
		terms.DiscountCents = listedCents - total
	}
	return terms
}

// Key names the terms, so that the terms applied last can be kept and compared.
func (t Terms) Key() string {
	return fmt.Sprintf("%s/%s/%d/%d", t.Kind, t.Country, t.RateBasis, t.DiscountCents)
}
