package domains

import (
	"context"
	"time"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
)

// Claim is what AddFunc decides on, read inside the store's transaction with the account
// locked.
type Claim struct {
	Account accounts.Account
	// Used counts the hostnames (pending and active) on the account's live apps.
	Used int64
	// OnThisApp: the app already has the hostname.
	OnThisApp bool
	// ActiveElsewhere: another app has the hostname active.
	ActiveElsewhere bool
}

// AddFunc decides whether a hostname may be added and returns it.
type AddFunc func(c Claim) (Domain, error)

// Store is the persistence custom hostnames need. Changes to active hostnames publish their
// event (apps.domain.activated, apps.domain.removed) in the same transaction.
type Store interface {
	AddDomain(ctx context.Context, app apps.App, hostname string, build AddFunc) (Domain, error)
	// Domains lists an app's hostnames, oldest first.
	Domains(ctx context.Context, appID string) ([]Domain, error)
	// RemoveDomain deletes one; ErrNotFound when the app does not have it.
	RemoveDomain(ctx context.Context, app apps.App, hostname string, at time.Time) error
}

// CheckStore is what the background verifier needs.
type CheckStore interface {
	// DueForCheck returns pending hostnames of live apps not checked since before, least
	// recently checked first.
	DueForCheck(ctx context.Context, before time.Time, limit int) ([]Domain, error)
	// MarkChecked records a look-up that did not verify.
	MarkChecked(ctx context.Context, id string, at time.Time) error
	// Activate makes a pending hostname active; false when it is no longer pending or
	// another app has it active (the first to verify wins).
	Activate(ctx context.Context, id string, at time.Time) (bool, error)
}
