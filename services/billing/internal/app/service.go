// Package app holds billing's use cases: recording accounts on their first plan, moving an
// account to another plan, and what the public routes show. The use cases decide which events
// a change publishes: every plan change announces itself as billingbus.KeyPlanChanged, through
// the outbox of the change's transaction.
package app

import "time"

// Service runs the use cases.
type Service struct {
	store Store
	clock func() time.Time
}

// New builds the use cases over store.
func New(store Store) *Service {
	return &Service{store: store, clock: time.Now}
}

// now is truncated to what Postgres stores, so a record read back equals the one written and
// the time in an event equals the time in the row.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }
