// Package usecase holds billing's use cases: recording accounts on their first plan, moving an
// account to another plan, and what the public routes show. The use cases decide which events
// a change publishes: every plan change announces itself as billingbus.KeyPlanChanged, through
// the outbox of the change's transaction.
package usecase

import (
	"time"

	"tori.dev/services/billing/internal/vat"
)

// Service runs the use cases.
type Service struct {
	store Store
	clock func() time.Time
	// pay is the payment provider; nil while paid plans are off (configured: false).
	pay *Payments
}

// Payments is what paid plans need: the provider, its price for each plan and interval, and
// where checkout and the portal send the customer back.
type Payments struct {
	Provider Provider
	Events   Events
	// VIES checks customers' VAT IDs; nil holds them to the format check.
	VIES       vat.VIES
	Prices     Prices
	ConsoleURL string
}

// Option changes how New builds the use cases.
type Option func(*Service)

// WithPayments turns paid plans on.
func WithPayments(p Payments) Option { return func(s *Service) { s.pay = &p } }

// WithClock replaces the clock, so a test can move time.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.clock = now } }

// New builds the use cases over store. Without WithPayments paid plans are off.
func New(store Store, opts ...Option) *Service {
	s := &Service{store: store, clock: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Configured reports whether paid plans are on.
func (s *Service) Configured() bool { return s.pay != nil }

// now is truncated to what Postgres stores, so a record read back equals the one written and
// the time in an event equals the time in the row.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }
