// Package accounts is the apps service's copy of the facts other services own about an
// account: its default region (identity) and its plan with the plan's limits (billing).
// The copy is fed by their events; when it has no plan yet, billing is asked once.
package accounts

import (
	"context"
	"errors"
	"fmt"
)

// DefaultRegion is the region of an account the apps service has heard nothing about yet;
// identity creates every account in eu.
const DefaultRegion = "eu"

// Plan is an account's plan and the limits the apps service enforces. Version orders the
// copies: a higher version always wins, so a late older event never undoes a newer one.
type Plan struct {
	Name          string
	Apps          int64
	CustomDomains int64
	Version       int64
}

// Account is what the apps service knows of an account.
type Account struct {
	ID            string
	DefaultRegion string // "" when no identity event has arrived yet
	Plan          *Plan  // nil when no plan is known yet
}

// Region is the region for a new app when the request names none.
func (a Account) Region() string {
	if a.DefaultRegion == "" {
		return DefaultRegion
	}
	return a.DefaultRegion
}

// ErrPlanUnavailable means the account's plan is unknown and billing could not be asked.
// Guessing would either refuse a paying customer or over-grant a free one, so callers
// answer "try again" instead.
var ErrPlanUnavailable = errors.New("accounts: plan unavailable")

// LimitError is a refusal because a plan limit is reached; errors.Is matches Kind.
type LimitError struct {
	Kind  error // the sentinel of the limit, e.g. apps.ErrAppLimit
	Limit int64
	Plan  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: limit %d on plan %s", e.Kind, e.Limit, e.Plan)
}

func (e *LimitError) Unwrap() error { return e.Kind }

// Store reads and writes the account copy.
type Store interface {
	// Account returns the copy; an account never heard of is an Account with only ID set.
	Account(ctx context.Context, id string) (Account, error)
	// SavePlan records p unless a copy of version p.Version or higher exists.
	SavePlan(ctx context.Context, accountID string, p Plan) error
}

// PlanSource asks the plan's owner (billing) directly.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (Plan, error)
}

// Resolver finds an account with a known plan.
type Resolver struct {
	Store  Store
	Source PlanSource
}

// Resolve returns the account's copy, asking billing for the plan when events have not yet
// brought one. The answer is stored, so billing is asked once per account.
func (r Resolver) Resolve(ctx context.Context, accountID string) (Account, error) {
	a, err := r.Store.Account(ctx, accountID)
	if err != nil {
		return Account{}, err
	}
	if a.Plan != nil {
		return a, nil
	}
	p, err := r.Source.AccountPlan(ctx, accountID)
	if err != nil {
		return Account{}, fmt.Errorf("%w: %v", ErrPlanUnavailable, err)
	}
	if err := r.Store.SavePlan(ctx, accountID, p); err != nil {
		return Account{}, err
	}
	// Re-read: an event may have stored a newer plan meanwhile.
	a, err = r.Store.Account(ctx, accountID)
	if err != nil {
		return Account{}, err
	}
	if a.Plan == nil {
		return Account{}, ErrPlanUnavailable
	}
	return a, nil
}
