package busapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

// identityStandIn plays the identity service: a schema with an outbox of its own in the
// test's database, and a relay publishing from it, so account.created reaches billing the way
// identity sends it.
type identityStandIn struct {
	pool *pgxpool.Pool
}

func startIdentity(t *testing.T, conn *bus.Conn, adminURL string) *identityStandIn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc := pgstore.Service{Schema: "identity_standin", Role: "tori_billing_test_identity"}
	pool, err := pgstore.Setup(ctx, adminURL, svc, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	testinfra.Background(t, "identity relay", bus.NewRelay(conn, pool, quiet).Run)
	return &identityStandIn{pool: pool}
}

// publish sends msg as identity would: through its outbox.
func (id *identityStandIn) publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return pgstore.InTx(ctx, id.pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, routingKey, msg) })
}

// Through the real broker: identity's account.created reaches billing's durable consumer,
// billing answers billing.rpc.account_plan from what it recorded, and a plan change reaches a
// listener as billing.account.plan_changed with its limits and version.
func TestThroughTheBus(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admin := newDatabase(t)
	pool := openPool(t, admin)
	svc := usecase.New(store.New(pool))
	conn := testinfra.DialBus(t, testinfra.BusConfig(t), quiet)
	identity := startIdentity(t, conn, admin)

	changes := make(chan *billingv1.AccountPlanChanged, 64)
	testinfra.Background(t, "billing relay", bus.NewRelay(conn, pool, quiet).Run)
	testinfra.Background(t, "billing consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, busapi.AccountsSubscription(svc, store.Bind))
	})
	testinfra.Background(t, "billing responder", func(ctx context.Context) error {
		return conn.Serve(ctx, billingbus.QueueAccountPlan, busapi.AccountPlanResponder(svc))
	})
	testinfra.Background(t, "plan listener", func(ctx context.Context) error {
		return conn.Listen(ctx, []string{billingbus.KeyPlanChanged}, func(_ context.Context, d bus.Delivery) error {
			var ev billingv1.AccountPlanChanged
			if err := d.Decode(&ev); err != nil {
				return err
			}
			changes <- &ev
			return nil
		})
	})

	ask := func(id string) (*billingv1.AccountPlanReply, error) {
		var reply billingv1.AccountPlanReply
		err := conn.Request(ctx, billingbus.QueueAccountPlan, &billingv1.AccountPlanRequest{AccountId: id}, &reply)
		return &reply, err
	}
	id := uuid.Must(uuid.NewV7())

	// The consumer's queue and the responder come up in the background, so identity announces
	// the account until billing answers that it has recorded it. The repeats are duplicates
	// billing must absorb.
	var reply *billingv1.AccountPlanReply
	testinfra.Eventually(t, time.Minute, "billing to record the account", func() bool {
		err := identity.publish(ctx, identitybus.KeyAccountCreated, &identityv1.AccountCreated{AccountId: id.String(), Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		reply, err = ask(id.String())
		if err != nil && !errors.Is(err, bus.ErrNoResponder) && !errors.Is(err, bus.ErrTimeout) {
			t.Fatalf("request: %v", err)
		}
		return err == nil && reply.GetVersion() == 1
	})
	checkReply(t, reply, catalog.Nestling, 1)
	var registrations int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE routing_key = $1`, billingbus.KeyPlanChanged).Scan(&registrations); err != nil {
		t.Fatal(err)
	}
	if registrations != 1 {
		t.Fatalf("%d plan_changed events for one account, want 1 however often account.created came", registrations)
	}

	// The listener's queue is bound in the background too: change plans until one change is
	// heard, then the next must arrive exactly as made.
	toggle := []string{"songbird", "flock"}
	heard := false
	for i := 0; !heard; i++ {
		if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, toggle[i%2]); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changes:
			heard = true
		case <-time.After(time.Second):
		case <-ctx.Done():
			t.Fatal("no plan change was ever heard")
		}
	}
	a, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "nestling")
	if err != nil {
		t.Fatal(err)
	}
	nestling, _ := catalog.Lookup("nestling")
	for {
		select {
		case ev := <-changes:
			if ev.GetVersion() < a.Version {
				continue // an earlier toggle, heard late
			}
			if ev.GetAccountId() != id.String() || ev.GetPlan() != "nestling" || ev.GetVersion() != a.Version ||
				!proto.Equal(ev.GetLimits(), usecase.LimitsMessage(nestling.Limits)) {
				t.Fatalf("plan_changed %v; want nestling at version %d", ev, a.Version)
			}
		case <-ctx.Done():
			t.Fatalf("the change to nestling (version %d) never arrived", a.Version)
		}
		break
	}

	reply, err = ask(id.String())
	if err != nil {
		t.Fatal(err)
	}
	checkReply(t, reply, catalog.Nestling, a.Version)

	reply, err = ask(uuid.Must(uuid.NewV7()).String())
	if err != nil {
		t.Fatal(err)
	}
	checkReply(t, reply, catalog.Nestling, 0)

	_, err = ask("acc_1")
	var re *bus.RemoteError
	if !errors.As(err, &re) || re.Code != busapi.CodeInvalidAccountID {
		t.Fatalf("request for a malformed id: %v, want a rejection with %s", err, busapi.CodeInvalidAccountID)
	}
}

func checkReply(t *testing.T, r *billingv1.AccountPlanReply, plan catalog.Name, version int64) {
	t.Helper()
	p, _ := catalog.Lookup(string(plan))
	if r.GetPlan() != string(plan) || r.GetVersion() != version || !proto.Equal(r.GetLimits(), usecase.LimitsMessage(p.Limits)) {
		t.Fatalf("reply %v; want %s at version %d", r, plan, version)
	}
}
