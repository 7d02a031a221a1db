package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
)

// Publisher writes an event to the outbox; it commits with the change it reports, so it is
// valid only inside Store.InTx.
type Publisher interface {
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}

// Tx is the persistence the use cases need, in a transaction (inside Store.InTx or a bus
// consumer's) or outside one. Lookups that find nothing return the domain's ErrNotFound;
// Lock* methods hold a row lock for the rest of the transaction.
type Tx interface {
	Publisher

	// Account returns the copy; an account never heard of is an Account with only ID set.
	Account(ctx context.Context, id string) (accounts.Account, error)
	// LockAccount reads the copy and locks it, creating an empty one first if needed:
	// holding it serialises the account's creates against its plan's limits.
	LockAccount(ctx context.Context, id string) (accounts.Account, error)
	// SavePlan keeps p unless a copy of version p.Version or higher exists.
	SavePlan(ctx context.Context, accountID string, p accounts.Plan) error
	// SaveRegion keeps the default region unless a region of a later at is kept.
	SaveRegion(ctx context.Context, accountID, region string, at time.Time) error

	// Apps lists the live apps of the teams, oldest first. An app's AccountID is its
	// owning team's id (a personal team's id is its account's).
	Apps(ctx context.Context, teamIDs []string) ([]apps.App, error)
	// AppTeam finds the team owning the live app slug; apps.ErrNotFound for none (a
	// tombstone included).
	AppTeam(ctx context.Context, slug string) (string, error)
	// AppBySlug finds a live app of the account.
	AppBySlug(ctx context.Context, accountID, slug string) (apps.App, error)
	// AppLive reports whether the app exists and is not deleted; a malformed id is not.
	AppLive(ctx context.Context, appID string) (bool, error)
	// ShareLiveApp is AppLive holding a share lock, which waits for a delete in flight.
	ShareLiveApp(ctx context.Context, appID string) (bool, error)
	// CountLiveApps counts the account's apps that are not deleted.
	CountLiveApps(ctx context.Context, accountID string) (int64, error)
	// InsertApp stores a new app; apps.ErrSlugTaken when a live app or an unreclaimed
	// tombstone holds its slug.
	InsertApp(ctx context.Context, a apps.App) error
	// LockLiveApp finds and locks a live app of the account.
	LockLiveApp(ctx context.Context, accountID, slug string) (apps.App, error)
	// TombstoneApp marks the app deleted at at, awaiting a confirmation from each of
	// cleanup, and reclaimed (its slug free) when reclaimed is set.
	TombstoneApp(ctx context.Context, appID string, at time.Time, cleanup []string, reclaimed bool) error
	// LockTombstone locks a deleted app not yet reclaimed; false when there is none.
	LockTombstone(ctx context.Context, appID string) (bool, error)
	// ConfirmCleanup records service's confirmation and returns how many are still awaited.
	ConfirmCleanup(ctx context.Context, appID, service string) (pending int64, err error)
	// Reclaim frees a tombstone's slug.
	Reclaim(ctx context.Context, appID string, at time.Time) error
	// LockRevisionState reads and locks the deploy-following part of a live app; false
	// when there is no such app.
	LockRevisionState(ctx context.Context, appID string) (apps.RevisionState, bool, error)
	// SaveRevisionState writes it back.
	SaveRevisionState(ctx context.Context, appID string, s apps.RevisionState, at time.Time) error

	// LockEnv serialises changes to an app's set of variables until the transaction ends and
	// returns how many it holds and whether key is among them.
	LockEnv(ctx context.Context, appID, key string) (count int64, has bool, err error)
	// LockEnvKeys is LockEnv for a change of several variables: it returns the names the
	// app holds.
	LockEnvKeys(ctx context.Context, appID string) (map[string]bool, error)
	// UpsertVar creates or replaces a variable; created tells which.
	UpsertVar(ctx context.Context, appID string, v env.Sealed) (created bool, err error)
	// Vars lists an app's variables sorted by name.
	Vars(ctx context.Context, appID string) ([]env.Sealed, error)
	// DeleteVar removes one; env.ErrNotSet when absent.
	DeleteVar(ctx context.Context, appID, key string) error
	// DeleteVars removes all of an app's variables.
	DeleteVars(ctx context.Context, appID string) error

	// DomainClaim reads what decides whether app may add hostname (without the account).
	DomainClaim(ctx context.Context, app apps.App, hostname string) (domains.Claim, error)
	// InsertDomain stores a new hostname; domains.ErrExists when the app has it.
	InsertDomain(ctx context.Context, d domains.Domain) error
	// Domains lists an app's hostnames, oldest first.
	Domains(ctx context.Context, appID string) ([]domains.Domain, error)
	// DeleteDomain removes one and returns it; domains.ErrNotFound when the app lacks it.
	DeleteDomain(ctx context.Context, appID, hostname string) (domains.Domain, error)
	// DeleteDomains removes all of an app's hostnames and returns them.
	DeleteDomains(ctx context.Context, appID string) ([]domains.Domain, error)
	// DueForCheck returns the hostnames of live apps whose next look-up is due at before
	// (pending and active alike), the longest due first.
	DueForCheck(ctx context.Context, before time.Time, limit int) ([]domains.Domain, error)
	// SaveCheck writes a check's result (now) over the hostname if it is still as was (its
	// status and miss) and returns its app; false when it was removed, deleted or changed
	// meanwhile, and domains.ErrHostnameTaken when now is active and another app has it
	// active.
	SaveCheck(ctx context.Context, was, now domains.Domain, at time.Time) (domains.Activation, bool, error)
	// SaveCertificate keeps zone's report of a hostname's certificate unless a newer one is
	// kept; false when nothing changed (no such hostname, another zone's app, or an older
	// report).
	SaveCertificate(ctx context.Context, appID, zone, hostname string, c domains.Certificate, at time.Time) (domains.CertificateChange, bool, error)
	// ExpireDomain removes a claim still pending since d.PendingSince; false when it is not.
	ExpireDomain(ctx context.Context, d domains.Domain) (bool, error)
}

// Store is a Tx that can also open a transaction. Methods called on the Store itself run
// outside any transaction.
type Store interface {
	Tx
	InTx(ctx context.Context, fn func(tx Tx) error) error
}

// RotationStore is what re-encryption needs.
type RotationStore interface {
	// UsedKeys counts stored values by key id.
	UsedKeys(ctx context.Context) (map[string]int64, error)
	// VarsNotUnder pages through variables sealed under any key but keyID, ordered by
	// (app id, name) after the cursor.
	VarsNotUnder(ctx context.Context, keyID string, afterApp, afterKey string, limit int) ([]env.StoredVar, error)
	// ReplaceCiphertext swaps a variable's ciphertext if it is still old; false when the
	// variable changed or went meanwhile.
	ReplaceCiphertext(ctx context.Context, v env.StoredVar, ciphertext []byte, keyID string) (bool, error)
}

// Keyring seals and opens values (internal/keyring). Failures to open wrap
// env.ErrUnknownKey or env.ErrDecrypt.
type Keyring interface {
	Encrypt(ctx context.Context, plaintext, aad []byte) (ciphertext []byte, keyID string, err error)
	Decrypt(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, error)
	Rewrap(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, string, error)
	Rotate(ctx context.Context) error
	Primary(ctx context.Context) (string, error)
}

// PlanSource asks the plan's owner (billing) directly.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (accounts.Plan, error)
}

// Resolver looks up TXT records (net.Resolver satisfies it).
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}
