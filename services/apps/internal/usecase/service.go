// Package usecase holds the apps service's use cases: each loads what it needs through the
// ports it declares (ports.go), applies the rules of internal/apps, internal/env,
// internal/domains and internal/accounts, saves the result and decides which events the
// change publishes, writing them to the outbox in the same transaction.
package usecase

import (
	"time"

	"github.com/google/uuid"
)

// Deps are what the use cases are built from.
type Deps struct {
	Store   Store
	Keyring Keyring
	// Plans answers when the account copy has no plan yet.
	Plans PlanSource
	// Hosting tells whether a zone hosts a deploy, before a snapshot opens for it.
	Hosting HostingChecker
	// Zones maps a region to the zone new apps there get.
	Zones map[string]string
	// Cleanup names the services that must confirm a deleted app's cleanup.
	Cleanup []string
	// AppsDomain is {apps_domain}: custom hostnames under it are refused.
	AppsDomain string
	Now        func() time.Time // time.Now when nil
	NewID      func() string    // a UUIDv7 when nil
}

// Services are the use cases over one store and keyring.
type Services struct {
	Apps     *Apps
	Env      *Env
	Domains  *Domains
	Accounts Accounts
}

// New wires the use cases.
func New(d Deps) Services {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.NewID == nil {
		d.NewID = newID
	}
	acc := Accounts{Store: d.Store, Source: d.Plans}
	a := &Apps{Store: d.Store, Accounts: acc, Zones: d.Zones, Cleanup: d.Cleanup, NewID: d.NewID, Now: d.Now}
	return Services{
		Apps:     a,
		Env:      &Env{Apps: a, Store: d.Store, Keyring: d.Keyring, Accounts: acc, Hosting: d.Hosting, Now: d.Now},
		Domains:  &Domains{Apps: a, Accounts: acc, Store: d.Store, AppsDomain: d.AppsDomain, NewID: d.NewID, Now: d.Now},
		Accounts: acc,
	}
}

// newID is a UUIDv7, sortable by creation as the conventions ask.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// stamp is a time as Postgres keeps it: UTC, microseconds.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
