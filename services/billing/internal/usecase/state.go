package usecase

import (
	"context"

	"github.com/google/uuid"

	"tori.dev/contract/billinghold"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/mirror"
)

// State is an account's billing as GET /api/billing shows it. While paid plans are off there
// is no customer, subscription, invoice or hold, and Configured is false.
type State struct {
	Account      accounts.Account
	Catalog      []catalog.Plan
	Configured   bool
	Customer     *mirror.Customer
	Subscription *mirror.Subscription
	Invoices     []mirror.Invoice
	// Hold is the payment-failure hold, nil when nothing is outstanding; Stage is its stage
	// at the time of reading.
	Hold  *billinghold.Hold
	Stage billinghold.Stage
}

// State reads the account's billing from Tori's mirror.
func (s *Service) State(ctx context.Context, accountID uuid.UUID) (State, error) {
	a, err := s.AccountPlan(ctx, accountID)
	if err != nil {
		return State{}, err
	}
	st := State{Account: a, Catalog: catalog.All(), Configured: s.Configured(), Invoices: []mirror.Invoice{}}
	if !st.Configured {
		return st, nil
	}
	if c, err := s.store.Customer(ctx, accountID); err == nil {
		st.Customer = &c
	} else if !isNotFound(err) {
		return State{}, err
	}
	subs, err := s.store.Subscriptions(ctx, accountID)
	if err != nil {
		return State{}, err
	}
	if cur, ok := mirror.Current(subs); ok {
		st.Subscription = &cur
	}
	if st.Invoices, err = s.store.Invoices(ctx, accountID); err != nil {
		return State{}, err
	}
	h, err := s.store.AccountHold(ctx, accountID)
	if err != nil {
		return State{}, err
	}
	if !h.Since.IsZero() {
		held := billinghold.From(h.Since)
		st.Hold, st.Stage = &held, held.StageAt(s.now())
	}
	return st, nil
}
