// Package hold is what billing alone decides about a payment-failure hold: which invoices hold
// an account and when its owner is told. The stages, their days and the notices' names are
// the contract's, in billinghold, which deploys and identity read too. Rules only, no I/O;
// the clock is the caller's.
package hold

import (
	"time"

	"tori.dev/contract/billinghold"
)

// Outstanding reports whether an invoice in status still holds the account: open (being
// retried) or uncollectible (every retry failed). Paid or void, it holds nothing.
func Outstanding(status string) bool { return status == "open" || status == "uncollectible" }

// Due are the notices the hold calls for at now, in the order to send them: day 0's from day
// 0 until the hold reaches its last stage (late rather than never, should billing learn of
// the failure late), and each warning during the day before its step. A warning whose day
// passed is not sent late: the step it warned of has happened.
func Due(h billinghold.Hold, now time.Time) []billinghold.Notice {
	if now.Before(h.Since) || !now.Before(h.ReclaimableFrom) {
		return nil
	}
	due := []billinghold.Notice{billinghold.NoticePaymentFailed}
	for _, w := range []struct {
		notice billinghold.Notice
		step   time.Time
	}{{billinghold.NoticeDeploysRefusedSoon, h.DeploysRefusedFrom}, {billinghold.NoticeServingStopsSoon, h.ServingStopsFrom}} {
		if !now.Before(w.step.Add(-billinghold.Day)) && now.Before(w.step) {
			due = append(due, w.notice)
		}
	}
	return due
}
