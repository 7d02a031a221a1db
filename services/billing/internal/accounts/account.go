// Package accounts is billing's view of an account: the plan it is on, and the version that
// orders its plan changes for every service that keeps a copy. Rules only, no I/O.
package accounts

import (
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
)

// Account is one team's plan as billing records it (the package predates teams: an account's
// personal team has the account's id, so ID is a team's id).
type Account struct {
	ID    uuid.UUID
	Email string // from identity's account.created (a team: its creator's); lets operators name the account
	Plan  catalog.Name
	// Version grows by one with each plan change. Consumers of plan_changed keep the highest
	// version they have seen, so a late, older event never undoes a newer one.
	Version   int64
	UpdatedAt time.Time
	// Personal is true for a person's personal team (the account's own plan), false for a
	// team made later.
	Personal bool
	// Deleted is true once the team is deleted: its row stays, so nothing brings it back.
	Deleted bool
}

// New is an account as billing first records it: on the default plan, at version 1.
func New(id uuid.UUID, email string, now time.Time) Account {
	return Account{ID: id, Email: email, Plan: catalog.Default, Version: 1, UpdatedAt: now, Personal: true}
}

// NewTeam is a team made after its creator's account, as billing first records it: on the
// default plan, at version 1, not personal.
func NewTeam(id uuid.UUID, creatorEmail string, now time.Time) Account {
	a := New(id, creatorEmail, now)
	a.Personal = false
	return a
}

// Unrecorded stands for an account billing has not heard of yet (identity's account.created
// may still be in flight). It is on the default plan, as every account starts, at version 0,
// so any recorded version outranks it.
func Unrecorded(id uuid.UUID) Account {
	return Account{ID: id, Plan: catalog.Default, Personal: true}
}

// ChangePlan moves the account to plan at the next version. changed is false, and the account
// returned as it is, when it is on that plan already: a no-op must not bump the version or
// publish an event.
func (a Account) ChangePlan(plan catalog.Name, now time.Time) (next Account, changed bool) {
	if a.Plan == plan {
		return a, false
	}
	a.Plan = plan
	a.Version++
	a.UpdatedAt = now
	return a, true
}
