package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/usecase"
)

// Registrar records new accounts; *usecase.Service is one.
type Registrar interface {
	RegisterAccount(ctx context.Context, tx usecase.Tx, id uuid.UUID, email string) error
}

// AccountsSubscription is billing's durable consumer of account.created. bind is the store
// inside the consumer's transaction (store.Bind), so the account commits with the record that
// the message was processed.
func AccountsSubscription(r Registrar, bind func(bus.Tx) usecase.Tx) bus.Subscription {
	return bus.Subscription{
		Queue:  AccountsQueue,
		Keys:   []string{identitybus.KeyAccountCreated},
		Handle: HandleAccountCreated(r, bind),
	}
}

// HandleAccountCreated puts the new account on the default plan, in the consumer's
// transaction. A message that can never be handled (not an AccountCreated, or an account id
// that is not a UUID) is dead-lettered at once rather than retried.
func HandleAccountCreated(r Registrar, bind func(bus.Tx) usecase.Tx) bus.TxHandler {
	want := string(proto.MessageName(&identityv1.AccountCreated{}))
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		if d.Type != "" && d.Type != want {
			return bus.Permanent(fmt.Errorf("account.created carries %s, want %s", d.Type, want))
		}
		var m identityv1.AccountCreated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode account.created: %w", err))
		}
		id, err := accounts.ParseID(m.GetAccountId())
		if err != nil {
			return bus.Permanent(fmt.Errorf("account.created for %q: %w", m.GetAccountId(), err))
		}
		return r.RegisterAccount(ctx, bind(tx), id, m.GetEmail())
	}
}
