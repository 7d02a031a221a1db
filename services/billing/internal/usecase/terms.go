package usecase

import (
	"context"
	"fmt"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/vat"
)

// TermsCandidate is a subscription still charging, its customer's details and the VAT terms
// applied to it last ("" never).
type TermsCandidate struct {
	SubscriptionID string
	CustomerID     string
	Plan           catalog.Name
	Interval       catalog.Interval
	Customer       vat.Customer
	Applied        string
}

// termsBatch bounds one round of ApplyVATTerms.
const termsBatch = 500

// currency is the catalog's: prices are euro cents.
const currency = "eur"

// ApplyVATTerms makes the provider charge each subscription as the VAT rules say for its
// customer now (internal/vat): the rate of their country included in the price, or under
// reverse charge the price less Czech VAT and no rate. It runs on a timer and after the
// provider's events, applies only terms that changed since they were last applied, and
// records them only once the provider took them, so a failure is tried again next round. It
// returns how many subscriptions it changed.
func (s *Service) ApplyVATTerms(ctx context.Context) (int64, error) {
	if s.pay == nil {
		return 0, nil
	}
	subs, err := s.store.TermsCandidates(ctx, termsBatch)
	if err != nil {
		return 0, err
	}
	var changed int64
	for _, c := range subs {
		terms, err := termsOf(c)
		if err != nil {
			return changed, err
		}
		if terms.Key() == c.Applied {
			continue
		}
		target := TermsTarget{SubscriptionID: c.SubscriptionID, CustomerID: c.CustomerID, Currency: currency}
		if err := s.pay.Provider.ApplyTerms(ctx, target, terms); err != nil {
			return changed, fmt.Errorf("apply VAT terms to %s: %w", c.SubscriptionID, err)
		}
		if err := s.store.SetAppliedTerms(ctx, c.SubscriptionID, terms.Key()); err != nil {
			return changed, err
		}
		changed++
	}
	return changed, nil
}

// termsOf are the VAT terms of a candidate's subscription at its plan's listed price.
func termsOf(c TermsCandidate) (vat.Terms, error) {
	plan, err := catalog.Lookup(string(c.Plan))
	if err != nil {
		return vat.Terms{}, err
	}
	t, err := vat.Decide(c.Customer, vat.Standard)
	if err != nil {
		return vat.Terms{}, err
	}
	return vat.TermsFor(t, c.Customer.Country, plan.Prices.For(c.Interval), vat.Standard), nil
}
