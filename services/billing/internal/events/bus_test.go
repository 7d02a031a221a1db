package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/billing"
	"tori.dev/services/billing/internal/bustest"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/events"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/store/storetest"
)

// Through the real broker: identity's account.created reaches billing's durable consumer,
// billing answers billing.rpc.account_plan from what it recorded, and a plan change reaches a
// listener as billing.account.plan_changed with its limits and version.
func TestThroughTheBus(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admin := storetest.NewDatabase(t)
	pool := storetest.OpenPool(t, admin)
	st := store.New(pool)
	svc := billing.NewService(st, bus.Publish)
	conn := bustest.Dial(t, bustest.Config(t))
	g := bustest.NewGroup()
	identity := bustest.StartIdentity(t, g, conn, admin)

	changes := make(chan *billingv1.AccountPlanChanged, 64)
	g.Go(t, "billing relay", bus.NewRelay(conn, pool, bustest.Log()).Run)
	g.Go(t, "billing consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, events.AccountsSubscription(svc))
	})
	g.Go(t, "billing responder", func(ctx context.Context) error {
		return conn.Serve(ctx, events.AccountPlanQueue, events.AccountPlanResponder(svc))
	})
	g.Go(t, "plan listener", func(ctx context.Context) error {
		return conn.Listen(ctx, []string{billing.RoutingKeyPlanChanged}, func(_ context.Context, d bus.Delivery) error {
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
		err := conn.Request(ctx, events.AccountPlanQueue, &billingv1.AccountPlanRequest{AccountId: id}, &reply)
		return &reply, err
	}
	id := uuid.Must(uuid.NewV7())

	// The consumer's queue and the responder come up in the background, so identity announces
	// the account until billing answers that it has recorded it. The repeats are duplicates
	// billing must absorb.
	var reply *billingv1.AccountPlanReply
	for {
		err := identity.Publish(ctx, events.KeyAccountCreated, &identityv1.AccountCreated{AccountId: id.String(), Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		reply, err = ask(id.String())
		if err == nil && reply.GetVersion() == 1 {
			break
		}
		if err != nil && !errors.Is(err, bus.ErrNoResponder) && !errors.Is(err, bus.ErrTimeout) {
			t.Fatalf("request: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("billing never recorded the account: last reply %v, err %v", reply, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	checkReply(t, reply, catalog.Nestling, 1)
	var registrations int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE routing_key = $1`, billing.RoutingKeyPlanChanged).Scan(&registrations); err != nil {
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
				!proto.Equal(ev.GetLimits(), billing.LimitsMessage(nestling.Limits)) {
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
	if !errors.As(err, &re) || re.Code != events.CodeInvalidAccountID {
		t.Fatalf("request for a malformed id: %v, want a rejection with %s", err, events.CodeInvalidAccountID)
	}
}

func checkReply(t *testing.T, r *billingv1.AccountPlanReply, plan catalog.Name, version int64) {
	t.Helper()
	p, _ := catalog.Lookup(string(plan))
	if r.GetPlan() != string(plan) || r.GetVersion() != version || !proto.Equal(r.GetLimits(), billing.LimitsMessage(p.Limits)) {
		t.Fatalf("reply %v; want %s at version %d", r, plan, version)
	}
}
