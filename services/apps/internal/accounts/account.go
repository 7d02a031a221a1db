// Package accounts is the apps service's copy of the facts other services own about an
// account: its default region (identity) and its plan with the plan's limits (billing).
// The copy is fed by their events; when it has no plan yet, billing is asked once.
package accounts

import (
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
