// Package mirror is Tori's own record of what the payment provider knows about an account:
// its customer, subscriptions, invoices and credit notes, fed by the provider's events and by
// sync. Rules that need "is this account subscribed" read the mirror, never the provider.
// Rules only, no I/O.
package mirror

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
)

// Customer is the account's customer at the provider and the details that decide its VAT.
type Customer struct {
	AccountID  uuid.UUID
	CustomerID string
	Country    string // ISO 3166-1 alpha-2, "" when unknown
	VATID      string // "" when none
	Business   bool
	VATIDValid bool
	// VATIDFormatOnly is true while VATIDValid is the format check's verdict, VIES not having
	// answered: the ID is checked again later.
	VATIDFormatOnly bool
}

// Subscription is one subscription of an account.
type Subscription struct {
	ID                 string
	AccountID          uuid.UUID
	CustomerID         string
	Plan               catalog.Name
	Interval           catalog.Interval
	Status             string
	CurrentPeriodStart time.Time
	CurrentPeriodEnd   time.Time
	CancelAtPeriodEnd  bool
	Created            time.Time
	// ObservedAt is when the provider said this (an event's creation time, or a sync's
	// reading time): a report observed earlier never overwrites one observed later.
	ObservedAt time.Time
}

// Provider subscription statuses that matter to Tori.
const (
	StatusActive            = "active"
	StatusTrialing          = "trialing"
	StatusPastDue           = "past_due"
	StatusUnpaid            = "unpaid"
	StatusCanceled          = "canceled"
	StatusIncompleteExpired = "incomplete_expired"
)

// Ended reports whether the subscription is over for good: a new checkout may start another.
func (s Subscription) Ended() bool {
	return s.Status == StatusCanceled || s.Status == StatusIncompleteExpired
}

// Grants reports whether the subscription gives its plan now. past_due still does: the
// payment-failure hold, not the plan, answers a failed payment. unpaid (every retry failed)
// does not: the account falls back to the free plan while the subscription is kept.
func (s Subscription) Grants() bool {
	switch s.Status {
	case StatusActive, StatusTrialing, StatusPastDue:
		return true
	}
	return false
}

// Current is the subscription the account's billing shows: the newest one not ended, else
// the newest one; ok is false when the account has none.
func Current(subs []Subscription) (cur Subscription, ok bool) {
	for _, s := range subs {
		switch {
		case !ok:
			cur, ok = s, true
		case cur.Ended() && !s.Ended():
			cur = s
		case cur.Ended() == s.Ended() && s.Created.After(cur.Created):
			cur = s
		}
	}
	return cur, ok
}

// Plan is the plan the account's subscriptions give it: the current subscription's plan while
// it grants one, else the free plan. ok is false when the account has no subscription at all,
// and then its plan is not billing's subscriptions' to decide (an operator may have set it).
func Plan(subs []Subscription) (plan catalog.Name, ok bool) {
	cur, ok := Current(subs)
	if !ok {
		return "", false
	}
	if cur.Grants() {
		return cur.Plan, true
	}
	return catalog.Nestling, true
}

// Subscribed reports whether a checkout must be refused: a subscription exists that has not
// ended (an unpaid one is paid through the portal, not replaced).
func Subscribed(subs []Subscription) bool {
	for _, s := range subs {
		if !s.Ended() {
			return true
		}
	}
	return false
}

// Invoice is one invoice of an account. Amounts are in cents.
type Invoice struct {
	ID             string
	AccountID      uuid.UUID
	SubscriptionID string
	Number         string
	Status         string
	Total          int64
	Currency       string
	// VATRate is the rate applied, in percent (21 for 21 %); 0 under reverse charge.
	VATRate       float64
	ReverseCharge bool
	HostedURL     string
	PDFURL        string
	Created       time.Time
	ObservedAt    time.Time
	CreditNotes   []CreditNote
}

// CreditNote is a refund against an invoice. Amounts are in cents.
type CreditNote struct {
	ID        string
	InvoiceID string
	AccountID uuid.UUID
	Number    string
	Total     int64
	Created   time.Time
}

// ErrNotFound means the mirror has no such record (for a customer: billing has not created
// the account's customer at the provider yet).
var ErrNotFound = errors.New("mirror: not recorded")

// HoldRecord is an account's payment-failure hold as billing last announced it: when it
// began (zero: no hold) and the version of that announcement.
type HoldRecord struct {
	Since   time.Time
	Version int64
}

// ActiveHold is an account whose payment-failure hold is on.
type ActiveHold struct {
	AccountID uuid.UUID
	Since     time.Time
}
