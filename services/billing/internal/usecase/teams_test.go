package usecase_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/usecase"
)

// A team's provider objects name the team (team_id) and a personal team's its account too:
// the port is told which kind of team pays. Deleting a team ends its running subscription at
// the provider (one ended already is left alone), and the mirror and the plan say so.
func TestTeamsPayForThemselvesAndStopPayingWhenDeleted(t *testing.T) {
	t.Parallel()
	svc, st, _, fake := newPaidService(t)
	person := uuid.Must(uuid.NewV7())
	register(t, svc, st, person, "ada@example.com")
	team := uuid.Must(uuid.NewV7())
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterTeam(ctx, tx, team, person, false) }); err != nil {
		t.Fatal(err)
	}

	for _, id := range []uuid.UUID{person, team} {
		if _, err := svc.Checkout(ctx, id, "songbird", "month"); err != nil {
			t.Fatal(err)
		}
	}
	if len(fake.Customers) != 2 || len(fake.Checkouts) != 2 {
		t.Fatalf("%d customers, %d checkouts", len(fake.Customers), len(fake.Checkouts))
	}
	for i, want := range []struct {
		id       uuid.UUID
		personal bool
	}{{person, true}, {team, false}} {
		c, k := fake.Customers[i], fake.Checkouts[i]
		if c.AccountID != want.id || c.Personal != want.personal || c.Email != "ada@example.com" || k.AccountID != want.id || k.Personal != want.personal {
			t.Fatalf("customer %+v, checkout %+v; want team %s personal %v", c, k, want.id, want.personal)
		}
	}

	teamCustomer := fake.Checkouts[1].CustomerID
	now := time.Now().UTC().Truncate(time.Second)
	for _, s := range []usecase.Subscription{
		{ID: "sub_live", CustomerID: teamCustomer, AccountID: team, PriceID: "price_songbird_month", Status: "active", Created: now},
		{ID: "sub_old", CustomerID: teamCustomer, AccountID: team, PriceID: "price_songbird_month", Status: "canceled", Created: now.Add(-time.Hour)},
	} {
		fake.PutSubscription(s)
	}
	if _, err := svc.Sync(ctx, team); err != nil {
		t.Fatal(err)
	}

	for range 2 { // a redelivery ends nothing more
		if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.TeamDeleted(ctx, tx, team) }); err != nil {
			t.Fatal(err)
		}
	}
	if len(fake.Canceled) != 1 || fake.Canceled[0] != "sub_live" {
		t.Fatalf("ended at the provider: %v", fake.Canceled)
	}
	subs, err := st.Subscriptions(ctx, team)
	if err != nil {
		t.Fatal(err)
	}
	if mirror.Subscribed(subs) {
		t.Fatalf("the mirror still holds a running subscription: %+v", subs)
	}
	if a, err := st.Account(ctx, team); err != nil || !a.Deleted {
		t.Fatalf("team's plan %+v, %v", a, err)
	}
	if a, err := st.Account(ctx, person); err != nil || a.Deleted {
		t.Fatalf("the person's own plan %+v, %v", a, err)
	}
}
