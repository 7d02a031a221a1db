package app

import (
	"context"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// State is an account's billing as GET /api/billing shows it. Paid plans are not enabled yet,
// so there is no payment provider behind it: no subscription, no invoices, no hold, and
// Configured is false.
type State struct {
	Account    accounts.Account
	Catalog    []catalog.Plan
	Configured bool
}

// State reads the account's billing.
func (s *Service) State(ctx context.Context, accountID uuid.UUID) (State, error) {
	a, err := s.AccountPlan(ctx, accountID)
	if err != nil {
		return State{}, err
	}
	return State{Account: a, Catalog: catalog.All(), Configured: false}, nil
}

// Sync refreshes the account's billing from the payment provider and returns it. Without a
// provider there is nothing to refresh, so it is State.
func (s *Service) Sync(ctx context.Context, accountID uuid.UUID) (State, error) {
	return s.State(ctx, accountID)
}

// Checkout would start buying plan at interval. The request is checked first and a malformed
// one refused with its own error (catalog.ErrUnknownPlan, ErrNotPurchasable,
// ErrUnknownInterval): a client's mistake is worth telling whether or not billing is on, and
// the answer to the same request does not change the day billing is enabled. Every
// well-formed request then gets ErrUnavailable, as the contract says while paid plans are off.
func (s *Service) Checkout(plan, interval string) error {
	if _, err := catalog.Purchasable(plan); err != nil {
		return err
	}
	if _, err := catalog.ParseInterval(interval); err != nil {
		return err
	}
	return ErrUnavailable
}

// Portal would open the payment provider's billing portal: ErrUnavailable while paid plans
// are off.
func (s *Service) Portal() error { return ErrUnavailable }
