package busapi_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
)

func teamDelivery(t *testing.T, key string, m proto.Message) bus.Delivery {
	t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Type: string(proto.MessageName(m)), Body: body, Attempt: 1}
}

// A team made after its creator's account gets a nestling plan of its own, announced for the
// team's id as an account's is; a personal team (its account has its plan) and a redelivery
// add nothing; the team's deletion marks it gone, and a creation arriving after the deletion
// brings nothing back.
func TestTeamsGetTheirOwnPlanAndLoseItWhenDeleted(t *testing.T) {
	t.Parallel()
	svc, st, pool := newService(t)
	handle := busapi.HandleTeams(svc, store.Bind)
	deliver := func(d bus.Delivery) {
		t.Helper()
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
			t.Fatalf("%s: %v", d.RoutingKey, err)
		}
	}
	creator := uuid.Must(uuid.NewV7())
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		return busapi.HandleAccountCreated(svc, store.Bind)(ctx, bus.TxOf(tx), accountCreated(t, creator.String(), "ada@example.com"))
	}); err != nil {
		t.Fatal(err)
	}
	team := uuid.Must(uuid.NewV7())
	created := &identityv1.TeamCreated{TeamId: team.String(), Slug: "crew", Name: "Crew", OwnerAccountId: creator.String()}

	deliver(teamDelivery(t, identitybus.KeyTeamCreated, &identityv1.TeamCreated{TeamId: creator.String(), Slug: "ada", Personal: true, OwnerAccountId: creator.String()}))
	deliver(teamDelivery(t, identitybus.KeyTeamCreated, created))
	deliver(teamDelivery(t, identitybus.KeyTeamCreated, created)) // a redelivery

	a, err := st.Account(ctx, team)
	if err != nil || a.Plan != catalog.Nestling || a.Version != 1 || a.Personal || a.Deleted || a.Email != "ada@example.com" {
		t.Fatalf("team's plan %+v, %v", a, err)
	}
	if own, err := st.Account(ctx, creator); err != nil || !own.Personal || own.Version != 1 {
		t.Fatalf("creator's plan %+v, %v", own, err)
	}
	rows := outboxRows(t, pool)
	if len(rows) != 2 { // the account's, then the team's
		t.Fatalf("%d outbox rows, want 2", len(rows))
	}
	var ev billingv1.AccountPlanChanged
	if err := proto.Unmarshal(rows[1].Body, &ev); err != nil || rows[1].RoutingKey != "billing.account.plan_changed" ||
		ev.GetAccountId() != team.String() || ev.GetPlan() != "nestling" || ev.GetVersion() != 1 ||
		ev.GetLimits().GetMembers() != 3 || ev.GetLimits().GetAuditRetentionDays() != 7 {
		t.Fatalf("team's announcement %s %v (%v)", rows[1].RoutingKey, &ev, err)
	}

	deliver(teamDelivery(t, identitybus.KeyTeamDeleted, &identityv1.TeamDeleted{TeamId: team.String()}))
	deliver(teamDelivery(t, identitybus.KeyTeamDeleted, &identityv1.TeamDeleted{TeamId: team.String()}))
	if a, err := st.Account(ctx, team); err != nil || !a.Deleted {
		t.Fatalf("deleted team's plan %+v, %v", a, err)
	}

	// The deletion overtook the creation: the creation finds the mark and announces nothing.
	late := uuid.Must(uuid.NewV7())
	deliver(teamDelivery(t, identitybus.KeyTeamDeleted, &identityv1.TeamDeleted{TeamId: late.String()}))
	deliver(teamDelivery(t, identitybus.KeyTeamCreated, &identityv1.TeamCreated{TeamId: late.String(), Slug: "late", OwnerAccountId: creator.String()}))
	if a, err := st.Account(ctx, late); err != nil || !a.Deleted {
		t.Fatalf("late team's plan %+v, %v", a, err)
	}
	if n := len(outboxRows(t, pool)); n != 2 {
		t.Fatalf("%d outbox rows after the deletions, want still 2", n)
	}

	// A message that can never be handled is dead-lettered at once.
	bad := teamDelivery(t, identitybus.KeyTeamDeleted, &identityv1.TeamDeleted{TeamId: "team_1"})
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), bad) }); !bus.IsPermanent(err) {
		t.Fatalf("a malformed team id: %v, want a permanent error", err)
	}
	if sub := busapi.TeamsSubscription(svc, store.Bind); sub.Queue != "billing.teams" || len(sub.Keys) != 2 {
		t.Fatalf("subscription %+v", sub)
	}
}
