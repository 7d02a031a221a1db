package deploy

import (
	"errors"
	"time"
)

// ErrBillingHold means the account's payment-failure hold refuses new deploys (from day 7);
// rollbacks still go through.
var ErrBillingHold = errors.New("deploy: new deploys are refused while a payment is outstanding")

// Hold is an account's payment-failure hold as billing announced it.
type Hold struct {
	Active             bool
	Since              time.Time
	DeploysRefusedFrom time.Time
	ServingStopsFrom   time.Time
	ReclaimableFrom    time.Time
	Version            int64
}

// Stage is the hold's stage at now, in billing's names.
func (h Hold) Stage(now time.Time) string {
	switch {
	case !now.Before(h.ReclaimableFrom):
		return "reclaimable"
	case !now.Before(h.ServingStopsFrom):
		return "serving_stopped"
	case !now.Before(h.DeploysRefusedFrom):
		return "deploys_refused"
	}
	return "notified"
}

// RefusesDeploys reports whether the hold refuses a new deploy at now.
func (h Hold) RefusesDeploys(now time.Time) bool {
	return h.Active && !now.Before(h.DeploysRefusedFrom)
}

// HoldError is ErrBillingHold with the hold's dates, which the 402 answer carries.
type HoldError struct {
	Hold  Hold
	Stage string
}

func (e *HoldError) Error() string { return ErrBillingHold.Error() }

func (e *HoldError) Unwrap() error { return ErrBillingHold }
