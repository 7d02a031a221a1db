package busapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/usecase"
)

// Billing says a hold's notice is due; identity, which alone knows the owner's address, mails
// what the hold means and its dates.
func TestHoldNoticesMailTheOwner(t *testing.T) {
	st, pool := storetest.New(t)
	ctx := context.Background()
	acc, owner := account.New("payer@example.com", time.Now().UTC().Truncate(time.Microsecond))
	if err := st.CreateAccount(ctx, acc, owner); err != nil {
		t.Fatal(err)
	}
	box := &mailbox{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := busapi.HoldMailConsumer{Repo: store.Bind, Service: usecase.New(usecase.Deps{Store: st, Mailer: box, Log: log}), Log: log}
	if got := c.Subscription(); got.Queue != "identity.holds" || len(got.Keys) != 1 || got.Keys[0] != billingbus.KeyHoldNotice {
		t.Fatalf("subscription %+v", got)
	}
	since := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	day := 24 * time.Hour
	notice := func(accountID, kind string) *billingv1.AccountHoldNotice {
		return &billingv1.AccountHoldNotice{AccountId: accountID, Notice: kind, Since: timestamppb.New(since),
			DeploysRefusedFrom: timestamppb.New(since.Add(7 * day)), ServingStopsFrom: timestamppb.New(since.Add(14 * day))}
	}
	deliver := func(m *billingv1.AccountHoldNotice) error {
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: billingbus.KeyHoldNotice, Body: body, Attempt: 1}
		return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) })
	}
	for _, tc := range []struct {
		kind    string
		subject string
		want    []string
	}{
		{"payment_failed", "a payment failed", []string{"failed on 2026-11-01 09:30 UTC", "Nothing changes yet", "2026-11-08 09:30 UTC", "2026-11-15 09:30 UTC", "rollbacks still work", "Nothing is deleted"}},
		{"deploys_refused_soon", "new deploys will be refused soon", []string{"still unpaid", "From 2026-11-08 09:30 UTC new deploys are refused", "2026-11-15 09:30 UTC"}},
		{"serving_stops_soon", "your apps will stop serving soon", []string{"From 2026-11-15 09:30 UTC every hostname", "Nothing is deleted"}},
	} {
		before := len(box.msgs)
		if err := deliver(notice(acc.ID, tc.kind)); err != nil {
			t.Fatal(err)
		}
		if len(box.msgs) != before+1 {
			t.Fatalf("%s: no mail", tc.kind)
		}
		m := box.msgs[len(box.msgs)-1]
		if m.To != "payer@example.com" || !strings.Contains(m.Subject, tc.subject) {
			t.Fatalf("%s: mail to %q, subject %q", tc.kind, m.To, m.Subject)
		}
		for _, w := range tc.want {
			if !strings.Contains(m.Text, w) {
				t.Errorf("%s: mail lacks %q:\n%s", tc.kind, w, m.Text)
			}
		}
	}
	sent := len(box.msgs)
	if err := deliver(notice(uuid.NewString(), "payment_failed")); err != nil || len(box.msgs) != sent {
		t.Fatalf("unknown account: %v, %d mails", err, len(box.msgs))
	}
	box.fail = true
	if err := deliver(notice(acc.ID, "payment_failed")); !errors.Is(err, usecase.ErrMailUnavailable) || bus.IsPermanent(err) {
		t.Fatalf("refused mail: %v", err)
	}
	box.fail = false
	for name, mutate := range map[string]func(*billingv1.AccountHoldNotice){
		"account id": func(n *billingv1.AccountHoldNotice) { n.AccountId = "../x" },
		"notice":     func(n *billingv1.AccountHoldNotice) { n.Notice = "pay_now_at_evil_test" },
		"since":      func(n *billingv1.AccountHoldNotice) { n.Since = nil },
		"dates":      func(n *billingv1.AccountHoldNotice) { n.ServingStopsFrom = nil },
	} {
		n := notice(acc.ID, "payment_failed")
		mutate(n)
		if err := deliver(n); !bus.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
	if len(box.msgs) != sent {
		t.Fatalf("%d mails after malformed notices, want %d", len(box.msgs), sent)
	}
}
