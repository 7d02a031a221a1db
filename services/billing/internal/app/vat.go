package app

import (
	"context"

	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/vat"
)

// customerDetails is c with the provider's details of the customer, its VAT ID checked (with
// VIES, or by format while VIES cannot answer). The check runs outside any transaction.
func (s *Service) customerDetails(ctx context.Context, c mirror.Customer, from Customer) (mirror.Customer, error) {
	c.Country, c.VATID, c.Business, c.VATIDValid = from.Country, from.VATID, from.Business, false
	if c.VATID == "" {
		return c, nil
	}
	var v vat.VIES = vat.Unreachable{}
	if s.pay.VIES != nil {
		v = s.pay.VIES
	}
	res, err := vat.Validate(ctx, v, c.VATID, c.Country)
	if err != nil {
		return mirror.Customer{}, err
	}
	c.VATIDValid = res.Valid
	return c, nil
}

// withVAT states on inv whether it was charged by reverse charge: an invoice without VAT to a
// customer the VAT rules put under reverse charge.
func withVAT(inv mirror.Invoice, c mirror.Customer, found bool) mirror.Invoice {
	if !found || inv.VATRate != 0 {
		return inv
	}
	t, err := vat.Decide(vat.Customer{Country: c.Country, Business: c.Business, VATID: c.VATID, VATIDValid: c.VATIDValid}, vat.Standard)
	inv.ReverseCharge = err == nil && t.ReverseCharge()
	return inv
}
