package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
)

// Repo is the persistence the use cases need. Lookups that find nothing return
// account.ErrNotFound or auth.ErrNotFound. Lock* methods take a row lock, and are meant for
// use inside InTx.
type Repo interface {
	TeamRepo
	ScopedRepo

	// LockEmail serialises first sign-ins of one address, so two verifies racing for a new
	// address create one account.
	LockEmail(ctx context.Context, email string) error
	UserByEmail(ctx context.Context, email string) (account.User, error)
	CreateAccount(ctx context.Context, a account.Account, u account.User) error
	Account(ctx context.Context, id string) (account.Account, account.User, error)
	LockAccount(ctx context.Context, id string) (account.Account, account.User, error)
	SaveAccount(ctx context.Context, a account.Account) error

	Plan(ctx context.Context, accountID string) (account.Plan, error)
	// SavePlan keeps p unless a plan of the same or a higher version is stored; saved says
	// which.
	SavePlan(ctx context.Context, accountID string, p account.Plan) (saved bool, err error)

	CreateMagicLink(ctx context.Context, m auth.MagicLink) error
	// CountMagicLinksSince counts the sign-in links made for email after since.
	CountMagicLinksSince(ctx context.Context, email string, since time.Time) (int, error)
	LockMagicLink(ctx context.Context, hash []byte) (auth.MagicLink, error)
	SaveMagicLink(ctx context.Context, m auth.MagicLink) error

	CreateSession(ctx context.Context, s auth.Session) error
	SessionByHash(ctx context.Context, hash []byte) (auth.Session, error)
	// RevokeSession ends the account's session id; revoked is false when it had already
	// ended.
	RevokeSession(ctx context.Context, accountID, id string, at time.Time) (revoked bool, err error)

	CreateAPIToken(ctx context.Context, t auth.APIToken) error
	APITokenByHash(ctx context.Context, hash []byte) (auth.APIToken, error)
	// TouchAPIToken sets last_used_at to at unless it is already within
	// auth.LastUsedResolution of it (another instance wrote it first).
	TouchAPIToken(ctx context.Context, id string, at time.Time) error
	ListAPITokens(ctx context.Context, accountID string) ([]auth.APIToken, error)
	// CountActiveAPITokens counts the account's tokens that are not revoked.
	CountActiveAPITokens(ctx context.Context, accountID string) (int, error)
	// RevokeAPIToken revokes the account's active token id, or returns auth.ErrNotFound.
	RevokeAPIToken(ctx context.Context, accountID, id string, at time.Time) error

	// CreateDeviceGrant stores g; created is false when its user code collides with a
	// stored one, and the caller draws another.
	CreateDeviceGrant(ctx context.Context, g auth.DeviceGrant) (created bool, err error)
	LockDeviceGrantByDeviceCode(ctx context.Context, hash []byte) (auth.DeviceGrant, error)
	LockDeviceGrantByUserCode(ctx context.Context, hash []byte) (auth.DeviceGrant, error)
	SaveDeviceGrant(ctx context.Context, g auth.DeviceGrant) error

	CreateAuthCode(ctx context.Context, c auth.AuthCode) error
	LockAuthCode(ctx context.Context, hash []byte) (auth.AuthCode, error)
	SaveAuthCode(ctx context.Context, c auth.AuthCode) error

	// Publish writes an event to the outbox; only valid inside InTx, where it commits with
	// the change it reports.
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}

// Store is a Repo that can also open a transaction. Methods called on the Store itself run
// outside any transaction.
type Store interface {
	AuditPruner
	Repo
	InTx(ctx context.Context, fn func(tx Repo) error) error
	// DeleteEndedBefore deletes magic links, authorization codes, device grants and
	// sessions that expired or were revoked before cutoff, and says how many.
	DeleteEndedBefore(ctx context.Context, cutoff time.Time) (int64, error)
}
