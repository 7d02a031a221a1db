package usecase

import (
	"context"
	"fmt"
	"time"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
)

// Accounts finds an account with a known plan (docs/conventions.md, "An account's plan").
type Accounts struct {
	Store  Tx
	Source PlanSource
}

// Resolve returns the account's copy, asking billing for the plan when events have not yet
// brought one. The answer is stored, so billing is asked once per account; when billing
// cannot answer, nothing guesses: accounts.ErrPlanUnavailable.
func (r Accounts) Resolve(ctx context.Context, accountID string) (accounts.Account, error) {
	a, err := r.Store.Account(ctx, accountID)
	if err != nil {
		return accounts.Account{}, err
	}
	if a.Plan != nil {
		return a, nil
	}
	p, err := r.Source.AccountPlan(ctx, accountID)
	if err != nil {
		return accounts.Account{}, fmt.Errorf("%w: %v", accounts.ErrPlanUnavailable, err)
	}
	if err := r.Store.SavePlan(ctx, accountID, p); err != nil {
		return accounts.Account{}, err
	}
	// Re-read: an event may have stored a newer plan meanwhile.
	a, err = r.Store.Account(ctx, accountID)
	if err != nil {
		return accounts.Account{}, err
	}
	if a.Plan == nil {
		return accounts.Account{}, accounts.ErrPlanUnavailable
	}
	return a, nil
}

// ApplyPlanChange keeps billing's plan in tx unless a newer version is kept already, so
// redelivered and reordered events leave the newest plan in place.
func ApplyPlanChange(ctx context.Context, tx Tx, accountID string, p accounts.Plan) error {
	return tx.SavePlan(ctx, accountID, p)
}

// ApplyRegionChange keeps identity's default region in tx unless a later one is kept. A
// region this service cannot place apps in is refused with apps.ErrInvalidRegion, and new
// apps keep the previous default.
func ApplyRegionChange(ctx context.Context, tx Tx, accountID, region string, at time.Time) error {
	if !apps.ValidRegion(region) {
		return apps.ErrInvalidRegion
	}
	return tx.SaveRegion(ctx, accountID, region, at)
}
