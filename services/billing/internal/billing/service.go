// Package billing holds billing's use cases: recording accounts on their first plan, moving
// an account to another plan, and what the public routes show. Every plan change announces
// itself as billing.account.plan_changed through the outbox, in the change's transaction.
package billing

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/services/billing/internal/accounts"
)

// Store is the persistence the use cases need; internal/store implements it.
type Store interface {
	InTx(ctx context.Context, fn func(tx pgx.Tx) error) error
	Account(ctx context.Context, id uuid.UUID) (accounts.Account, error)
	InsertAccount(ctx context.Context, tx pgx.Tx, a accounts.Account) (inserted bool, err error)
	LockAccount(ctx context.Context, tx pgx.Tx, ref accounts.Ref) (accounts.Account, error)
	UpdateAccount(ctx context.Context, tx pgx.Tx, a accounts.Account) error
}

// Publisher writes an event to the outbox in tx; bus.Publish in production.
type Publisher func(ctx context.Context, tx pgx.Tx, routingKey string, msg proto.Message) error

// Service runs the use cases.
type Service struct {
	store   Store
	publish Publisher
	now     func() time.Time
}

// NewService builds the use cases over store, announcing changes with publish.
func NewService(store Store, publish Publisher) *Service {
	return &Service{store: store, publish: publish, now: now}
}

// now is truncated to what Postgres stores, so a record read back equals the one written and
// the time in an event equals the time in the row.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
