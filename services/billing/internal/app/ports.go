package app

import (
	"context"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/services/billing/internal/accounts"
)

// Store is the persistence the use cases need; internal/store implements it. Lookups that
// find nothing return accounts.ErrNotFound.
type Store interface {
	// Account reads one account's record outside any transaction.
	Account(ctx context.Context, id uuid.UUID) (accounts.Account, error)
	// InTx runs fn in one transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(tx Tx) error) error
}

// Tx is the store inside one transaction: a plan change and the event announcing it commit
// together or not at all.
type Tx interface {
	// InsertAccount records a unless the account is recorded already; inserted tells which.
	InsertAccount(ctx context.Context, a accounts.Account) (inserted bool, err error)
	// LockAccount reads the account ref names and locks it until the transaction ends, so
	// concurrent plan changes apply one after the other. An email naming several accounts
	// is accounts.ErrAmbiguous.
	LockAccount(ctx context.Context, ref accounts.Ref) (accounts.Account, error)
	UpdateAccount(ctx context.Context, a accounts.Account) error
	Publisher
}

// Publisher writes an event to the outbox of the transaction it belongs to.
type Publisher interface {
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}
