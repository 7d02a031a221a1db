// Package billinghold is the payment-failure hold's stages: the day each applies, counted from
// the first failed payment attempt of an unpaid invoice, and the stage a hold is at; the
// notices billing asks identity to mail about it; and the hold's JSON view. Billing
// publishes a hold's dates in billingv1.AccountHoldChanged (billingbus.KeyHoldChanged) and
// shows it on GET /api/billing; deploys reads the same dates to refuse new deploys and
// carries the same view in its 402; identity mails the notices billing names in
// billingv1.AccountHoldNotice. All use this package, so the rule lives here only. Rules only,
// no I/O and nothing but the standard library; the clock is the caller's.
package billinghold

import "time"

// Stage is how far the hold has gone; the names are the contract's.
type Stage string

const (
	// Notified (day 0): the account is told; nothing changes.
	Notified Stage = "notified"
	// DeploysRefused (day 7): new deploys are refused with 402 billing_hold; rollbacks work.
	DeploysRefused Stage = "deploys_refused"
	// ServingStopped (day 14): every hostname of the account answers 503 "paused".
	ServingStopped Stage = "serving_stopped"
	// Reclaimable (day 30): artifacts become eligible for reclamation; nothing is done yet.
	Reclaimable Stage = "reclaimable"
)

// Day is one day of a hold: day N is Since + N × Day.
const Day = 24 * time.Hour

// Days from the first failed attempt at which each stage applies.
const (
	DeploysRefusedDay = 7
	ServingStoppedDay = 14
	ReclaimableDay    = 30
)

// Hold is a hold's dates: when it began and when each later stage applies.
type Hold struct {
	Since              time.Time
	DeploysRefusedFrom time.Time
	ServingStopsFrom   time.Time
	ReclaimableFrom    time.Time
}

// From is the hold that began at since.
func From(since time.Time) Hold {
	since = since.UTC()
	return Hold{
		Since:              since,
		DeploysRefusedFrom: since.Add(DeploysRefusedDay * Day),
		ServingStopsFrom:   since.Add(ServingStoppedDay * Day),
		ReclaimableFrom:    since.Add(ReclaimableDay * Day),
	}
}

// StageAt is the hold's stage at now.
func (h Hold) StageAt(now time.Time) Stage {
	switch {
	case !now.Before(h.ReclaimableFrom):
		return Reclaimable
	case !now.Before(h.ServingStopsFrom):
		return ServingStopped
	case !now.Before(h.DeploysRefusedFrom):
		return DeploysRefused
	}
	return Notified
}

// RefusesDeploysAt reports whether the hold refuses a new deploy at now (from day 7).
func (h Hold) RefusesDeploysAt(now time.Time) bool { return !now.Before(h.DeploysRefusedFrom) }
