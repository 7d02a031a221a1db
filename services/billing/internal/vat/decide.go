package vat

import "errors"

// Customer is what decides a customer's VAT.
type Customer struct {
	Country    string // ISO 3166-1 alpha-2
	Business   bool
	VATID      string
	VATIDValid bool
}

// Kind names the rule a sale falls under.
type Kind string

const (
	// Domestic: a Czech customer, consumer or business, pays Czech VAT.
	Domestic Kind = "domestic"
	// EUConsumer: a consumer (or a business without a valid VAT ID) in another member state
	// pays that state's VAT.
	EUConsumer Kind = "eu_consumer"
	// ReverseCharge: a business in another member state with a valid VAT ID is charged
	// without VAT and accounts for it itself; the invoice says so.
	ReverseCharge Kind = "reverse_charge"
	// OutsideEU: no EU VAT is due; the customer pays the listed price.
	OutsideEU Kind = "outside_eu"
)

// ErrUnknownCountry means the customer's country is not known, so no VAT can be decided:
// checkout collects the billing address before anything is charged.
var ErrUnknownCountry = errors.New("vat: the customer's country is not known")

// Treatment is the VAT of one sale.
type Treatment struct {
	Kind Kind
	// RateBasis is the VAT rate applied, in basis points; 0 under reverse charge and outside
	// the EU.
	RateBasis int64
}

// ReverseCharge reports whether the invoice must state the reverse charge.
func (t Treatment) ReverseCharge() bool { return t.Kind == ReverseCharge }

// Decide is the VAT of a sale to c under rates.
func Decide(c Customer, rates Rates) (Treatment, error) {
	switch {
	case c.Country == "":
		return Treatment{}, ErrUnknownCountry
	case c.Country == Seller:
		return Treatment{Kind: Domestic, RateBasis: rates.Basis[Seller]}, nil
	case !rates.InEU(c.Country):
		return Treatment{Kind: OutsideEU}, nil
	case c.Business && c.VATID != "" && c.VATIDValid:
		return Treatment{Kind: ReverseCharge}, nil
	}
	return Treatment{Kind: EUConsumer, RateBasis: rates.Basis[c.Country]}, nil
}

// Charge is what a sale at the listed price (cents, VAT included for consumers) costs under
// t: the total charged and the VAT it includes. Under reverse charge the total is the listed
// price without Czech VAT (÷ 1.21), rounded to the cent; elsewhere the listed price is the
// total and the VAT is the part of it at t's rate.
func (t Treatment) Charge(listedCents int64, rates Rates) (totalCents, vatCents int64) {
	switch t.Kind {
	case ReverseCharge:
		return divRound(listedCents*10000, 10000+rates.Basis[Seller]), 0
	case OutsideEU:
		return listedCents, 0
	}
	net := divRound(listedCents*10000, 10000+t.RateBasis)
	return listedCents, listedCents - net
}

// divRound is a ÷ b rounded half up, for non-negative a and positive b.
func divRound(a, b int64) int64 { return (2*a + b) / (2 * b) }
