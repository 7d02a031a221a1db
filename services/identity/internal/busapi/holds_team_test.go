package busapi_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/access"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/team"
	"tori.dev/services/identity/internal/usecase"
)

// A team's hold is the team's: its notice goes to each of the team's owners, not to a
// developer, and not to nobody because the team's id is no account's.
func TestATeamsHoldNoticeMailsItsOwners(t *testing.T) {
	st, pool := storetest.New(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	person := func(email string) account.User {
		a, u := account.New(email, now)
		if err := st.CreateAccount(ctx, a, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	ada, bob, cyd := person("ada@example.com"), person("bob@example.com"), person("cyd@example.com")
	acme := team.New("Acme", "acme-"+uuid.NewString()[:8], ada.AccountID, now)
	if ok, err := st.CreateTeam(ctx, acme); err != nil || !ok {
		t.Fatalf("team: %v %v", ok, err)
	}
	for _, m := range []struct {
		u    account.User
		role access.Role
	}{{ada, access.Owner}, {bob, access.Owner}, {cyd, access.Developer}} {
		if err := st.AddMember(ctx, acme.ID, m.u.ID, m.role, now); err != nil {
			t.Fatal(err)
		}
	}
	box := &mailbox{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := busapi.HoldMailConsumer{Repo: store.Bind, Service: usecase.New(usecase.Deps{Store: st, Mailer: box, Log: log}), Log: log}
	body, _ := proto.Marshal(&billingv1.AccountHoldNotice{AccountId: acme.ID, Notice: "payment_failed", Since: timestamppb.New(now),
		DeploysRefusedFrom: timestamppb.New(now.Add(7 * 24 * time.Hour)), ServingStopsFrom: timestamppb.New(now.Add(14 * 24 * time.Hour))})
	d := bus.Delivery{ID: uuid.NewString(), RoutingKey: billingbus.KeyHoldNotice, Body: body, Attempt: 1}
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) }); err != nil {
		t.Fatal(err)
	}
	var to []string
	for _, m := range box.msgs {
		to = append(to, m.To)
	}
	slices.Sort(to)
	if !slices.Equal(to, []string{"ada@example.com", "bob@example.com"}) {
		t.Fatalf("mailed %v, want the two owners", to)
	}
}
