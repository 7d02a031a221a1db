package deploy

import (
	"errors"
	"time"

	"tori.dev/contract/billinghold"
)

// ErrBillingHold means the account's payment-failure hold refuses new deploys (from day 7);
// rollbacks still go through.
var ErrBillingHold = errors.New("deploy: new deploys are refused while a payment is outstanding")

// Hold is an account's payment-failure hold as billing announced it: whether there is one,
// its dates (whose stages billinghold computes) and the event's version.
type Hold struct {
	Active bool
	billinghold.Hold
	Version int64
}

// RefusesDeploys reports whether the hold refuses a new deploy at now.
func (h Hold) RefusesDeploys(now time.Time) bool {
	return h.Active && h.RefusesDeploysAt(now)
}

// HoldError is ErrBillingHold with the hold's dates, which the 402 answer carries.
type HoldError struct {
	Hold  Hold
	Stage billinghold.Stage
}

func (e *HoldError) Error() string { return ErrBillingHold.Error() }

func (e *HoldError) Unwrap() error { return ErrBillingHold }
