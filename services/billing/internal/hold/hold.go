// Package hold is the payment-failure hold: its stages and the day each applies, counted from
// the first failed payment attempt of an unpaid invoice. Rules only, no I/O; the clock is the
// caller's.
package hold

import "time"

// Stage is how far the hold has gone.
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

// Day N of a hold is Since + N × 24 h.
const day = 24 * time.Hour

// Days from the first failed attempt at which each stage applies.
const (
	DeploysRefusedDay = 7
	ServingStoppedDay = 14
	ReclaimableDay    = 30
)

// Hold is an account's hold.
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
		DeploysRefusedFrom: since.Add(DeploysRefusedDay * day),
		ServingStopsFrom:   since.Add(ServingStoppedDay * day),
		ReclaimableFrom:    since.Add(ReclaimableDay * day),
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

// Outstanding reports whether an invoice in status still holds the account: open (being
// retried) or uncollectible (every retry failed). Paid or void, it holds nothing.
func Outstanding(status string) bool { return status == "open" || status == "uncollectible" }

// Notice is a message to the account's owner about its hold.
type Notice string

const (
	// NoticePaymentFailed goes out on day 0.
	NoticePaymentFailed Notice = "payment_failed"
	// NoticeDeploysRefusedSoon goes out on day 6, before new deploys are refused.
	NoticeDeploysRefusedSoon Notice = "deploys_refused_soon"
	// NoticeServingStopsSoon goes out on day 13, before serving stops.
	NoticeServingStopsSoon Notice = "serving_stops_soon"
)

// Due are the notices the hold calls for at now, in the order to send them: day 0's from day
// 0 until the hold reaches its last stage (late rather than never, should billing learn of
// the failure late), and each warning during the day before its step. A warning whose day
// passed is not sent late: the step it warned of has happened.
func (h Hold) Due(now time.Time) []Notice {
	if now.Before(h.Since) || !now.Before(h.ReclaimableFrom) {
		return nil
	}
	due := []Notice{NoticePaymentFailed}
	for _, w := range []struct {
		notice Notice
		step   time.Time
	}{{NoticeDeploysRefusedSoon, h.DeploysRefusedFrom}, {NoticeServingStopsSoon, h.ServingStopsFrom}} {
		if !now.Before(w.step.Add(-day)) && now.Before(w.step) {
			due = append(due, w.notice)
		}
	}
	return due
}
