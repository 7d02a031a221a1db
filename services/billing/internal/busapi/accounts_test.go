package busapi_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

func accountCreated(t *testing.T, id, email string) bus.Delivery {
	t.Helper()
	m := &identityv1.AccountCreated{AccountId: id, UserId: uuid.NewString(), Email: email, Name: "ada", DefaultRegion: "eu"}
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Delivery{
		ID: uuid.NewString(), RoutingKey: "identity.account.created",
		Type: string(proto.MessageName(m)), Body: body, Attempt: 1,
	}
}

type outboxRow struct {
	RoutingKey string
	Type       string
	Body       []byte
}

func outboxRows(t *testing.T, pool *pgxpool.Pool) []outboxRow {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT routing_key, type, body FROM outbox ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[outboxRow])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The consumer's handler, run in a transaction as bus.Consume runs it (without a broker):
// the account is recorded on nestling and its plan_changed event sits in the outbox, written
// in the same transaction; handling the same fact again adds neither.
func TestAccountCreatedRecordsTheAccountAndQueuesItsPlan(t *testing.T) {
	t.Parallel()
	svc, st, pool := newService(t)
	handle := busapi.HandleAccountCreated(svc, store.Bind)
	id := uuid.Must(uuid.NewV7())

	for i := 0; i < 2; i++ { // the second is a redelivery (a new message id, the same fact)
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			return handle(ctx, bus.TxOf(tx), accountCreated(t, id.String(), "ada@example.com"))
		}); err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
	}

	a, err := st.Account(ctx, id)
	if err != nil || a.Plan != catalog.Nestling || a.Version != 1 || a.Email != "ada@example.com" {
		t.Fatalf("recorded account %+v, %v", a, err)
	}
	rows := outboxRows(t, pool)
	if len(rows) != 1 {
		t.Fatalf("%d outbox rows, want exactly 1", len(rows))
	}
	if rows[0].RoutingKey != "billing.account.plan_changed" || rows[0].Type != "tori.billing.v1.AccountPlanChanged" {
		t.Fatalf("outbox row %s %s", rows[0].RoutingKey, rows[0].Type)
	}
	var ev billingv1.AccountPlanChanged
	if err := proto.Unmarshal(rows[0].Body, &ev); err != nil {
		t.Fatal(err)
	}
	nestling, _ := catalog.Lookup("nestling")
	if ev.GetAccountId() != id.String() || ev.GetPlan() != "nestling" || ev.GetVersion() != 1 ||
		!proto.Equal(ev.GetLimits(), usecase.LimitsMessage(nestling.Limits)) {
		t.Fatalf("event %v", &ev)
	}
}

// A failed handler leaves nothing behind: the row and the event go together or not at all.
func TestAccountCreatedLeavesNothingWhenTheTransactionFails(t *testing.T) {
	t.Parallel()
	svc, st, pool := newService(t)
	handle := busapi.HandleAccountCreated(svc, store.Bind)
	id := uuid.Must(uuid.NewV7())
	err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := handle(ctx, bus.TxOf(tx), accountCreated(t, id.String(), "ada@example.com")); err != nil {
			return err
		}
		return context.Canceled // whatever fails after the handler, e.g. the processed-id insert
	})
	if err == nil {
		t.Fatal("transaction committed")
	}
	if _, err := st.Account(ctx, id); err == nil {
		t.Fatal("account recorded by a rolled-back transaction")
	}
	if rows := outboxRows(t, pool); len(rows) != 0 {
		t.Fatalf("%d outbox rows after rollback", len(rows))
	}
}

// Messages that can never succeed are dead-lettered at once instead of being retried.
func TestMalformedAccountCreatedIsPermanent(t *testing.T) {
	t.Parallel()
	handle := busapi.HandleAccountCreated(registrarFunc(func() { t.Error("registered from a malformed message") }), store.Bind)
	notAUUID := accountCreated(t, "acc_1", "ada@example.com")
	wrongType := accountCreated(t, uuid.NewString(), "ada@example.com")
	wrongType.Type = "tori.identity.v1.TokenRevoked"
	garbage := accountCreated(t, uuid.NewString(), "ada@example.com")
	garbage.Body = []byte{0xff, 0xff, 0xff}

	for name, d := range map[string]bus.Delivery{"id not a uuid": notAUUID, "wrong type": wrongType, "undecodable body": garbage} {
		t.Run(name, func(t *testing.T) {
			if err := handle(ctx, bus.Tx{}, d); !bus.IsPermanent(err) {
				t.Fatalf("got %v, want a permanent error", err)
			}
		})
	}
}

type registrarFunc func()

func (f registrarFunc) RegisterAccount(context.Context, usecase.Tx, uuid.UUID, string) error {
	f()
	return nil
}

func TestAccountsSubscription(t *testing.T) {
	sub := busapi.AccountsSubscription(registrarFunc(func() {}), store.Bind)
	if sub.Queue != "billing.accounts" || len(sub.Keys) != 1 || sub.Keys[0] != "identity.account.created" || sub.Handle == nil {
		t.Fatalf("subscription %+v", sub)
	}
}
