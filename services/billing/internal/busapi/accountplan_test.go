package busapi_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

func request(t *testing.T, m proto.Message) bus.Delivery {
	t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Delivery{ID: uuid.NewString(), Type: string(proto.MessageName(m)), Body: body, Attempt: 1}
}

func TestAccountPlanResponder(t *testing.T) {
	t.Parallel()
	svc, st, _ := newService(t)
	respond := busapi.AccountPlanResponder(svc)

	known := uuid.Must(uuid.NewV7())
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterAccount(ctx, tx, known, "ada@example.com") }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: known}, "songbird"); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		id      string
		plan    catalog.Name
		version int64
	}{
		{"recorded account", known.String(), catalog.Songbird, 2},
		{"account not recorded yet", uuid.Must(uuid.NewV7()).String(), catalog.Nestling, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := respond(ctx, request(t, &billingv1.AccountPlanRequest{AccountId: tc.id}))
			if err != nil {
				t.Fatal(err)
			}
			reply, ok := msg.(*billingv1.AccountPlanReply)
			if !ok {
				t.Fatalf("reply is %T", msg)
			}
			p, _ := catalog.Lookup(string(tc.plan))
			if reply.GetPlan() != string(tc.plan) || reply.GetVersion() != tc.version ||
				!proto.Equal(reply.GetLimits(), usecase.LimitsMessage(p.Limits)) {
				t.Fatalf("reply %v; want %s at version %d", reply, tc.plan, tc.version)
			}
		})
	}
}

func TestAccountPlanResponderRejectsBadRequests(t *testing.T) {
	t.Parallel()
	respond := busapi.AccountPlanResponder(nil) // never reached: the request fails first
	bad := request(t, &billingv1.AccountPlanRequest{AccountId: "x"})
	bad.Body = []byte{0xff, 0xff}
	cases := map[string]struct {
		d    bus.Delivery
		code string
	}{
		"not a uuid":       {request(t, &billingv1.AccountPlanRequest{AccountId: "acc_1"}), busapi.CodeInvalidAccountID},
		"empty id":         {request(t, &billingv1.AccountPlanRequest{}), busapi.CodeInvalidAccountID},
		"undecodable body": {bad, busapi.CodeInvalidRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := respond(ctx, tc.d)
			var re *bus.RemoteError
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("got %v, want a rejection with code %s", err, tc.code)
			}
		})
	}
}
