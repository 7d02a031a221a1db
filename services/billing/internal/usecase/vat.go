package usecase

import (
	"context"

	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/vat"
)

// customerDetails is c with the provider's details of the customer, its VAT ID checked (with
// VIES, or by format while VIES cannot answer). The check runs outside any transaction.
func (s *Service) customerDetails(ctx context.Context, c mirror.Customer, from Customer) (mirror.Customer, error) {
	c.Country, c.VATID, c.Business, c.VATIDValid, c.VATIDFormatOnly = from.Country, from.VATID, from.Business, false, false
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
	c.VATIDValid, c.VATIDFormatOnly = res.Valid, res.FormatOnly
	return c, nil
}

// recheckBatch bounds one round of VAT-ID rechecks.
const recheckBatch = 100

// RecheckVATIDs asks VIES again about the VAT IDs it could not answer for, and records its
// verdict once it answers. It runs on a timer; it returns how many were settled.
func (s *Service) RecheckVATIDs(ctx context.Context) (int64, error) {
	if s.pay == nil {
		return 0, nil
	}
	pending, err := s.store.FormatOnlyCustomers(ctx, recheckBatch)
	if err != nil {
		return 0, err
	}
	var settled int64
	for _, c := range pending {
		checked, err := s.customerDetails(ctx, c, Customer{Country: c.Country, VATID: c.VATID, Business: c.Business})
		if err != nil {
			return settled, err
		}
		if checked.VATIDFormatOnly {
			continue // VIES still cannot answer
		}
		err = s.store.InTx(ctx, func(tx Tx) error {
			current, err := tx.Customer(ctx, c.AccountID)
			if err != nil || current.VATID != c.VATID || current.Country != c.Country {
				return err // changed meanwhile: that change was checked on its own
			}
			return tx.UpdateCustomer(ctx, checked, s.now())
		})
		if err != nil {
			return settled, err
		}
		settled++
	}
	return settled, nil
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
