package usecase_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/providerfake"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/stripepay"
	"tori.dev/services/billing/internal/stripepay/stripetest"
	"tori.dev/services/billing/internal/usecase"
)

const whsec = "whsec_test_tori"

// webhookFixture is billing with paid plans on: the FAKE provider, and Stripe's own signature
// check over events the test writes and signs.
type webhookFixture struct {
	svc      *usecase.Service
	st       usecase.Store
	rec      *recorder
	account  uuid.UUID
	customer string
}

func newWebhookFixture(t *testing.T, opts ...usecase.Option) webhookFixture {
	t.Helper()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	opts = append(opts, usecase.WithPayments(usecase.Payments{
		Provider: providerfake.New(), Events: stripepay.Events{Secret: whsec}, Prices: testPrices, ConsoleURL: "http://console.test",
	}))
	svc := usecase.New(st, opts...)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, err := svc.Portal(ctx, id); err != nil { // creates the customer
		t.Fatal(err)
	}
	c, err := st.Customer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return webhookFixture{svc: svc, st: st, rec: rec, account: id, customer: c.CustomerID}
}

// invoice is the account's invoice object, in status.
func (f webhookFixture) invoice(status string, created time.Time) map[string]any {
	return stripetest.Invoice("in_"+f.account.String(), f.customer, "sub_1", f.account, "T-1", status, 900, 156, created)
}

func (f webhookFixture) deliver(t *testing.T, eventID, eventType string, created time.Time, object map[string]any) error {
	t.Helper()
	body := stripetest.Event(eventID, eventType, created, object)
	return f.svc.ApplyWebhook(ctx, body, stripetest.Sign(body, whsec))
}

func (f webhookFixture) sub(status string, cancel bool, price string, start time.Time) map[string]any {
	return stripetest.Subscription("sub_"+f.account.String(), f.customer, f.account, price, status, cancel, start, start.AddDate(0, 1, 0))
}

func (f webhookFixture) state(t *testing.T) usecase.State {
	t.Helper()
	s, err := f.svc.State(ctx, f.account)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSubscriptionEventsMoveThePlanOnceAndInOrder(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	steps := []struct {
		name, id, typ string
		at            time.Time
		status        string
		cancel        bool
		price         string
		plan          catalog.Name
		subStatus     string
		events        int // plan_changed events so far, registration's included
	}{
		{"subscribed", "evt_a", "customer.subscription.created", t0, "active", false, "price_songbird_month", catalog.Songbird, "active", 2},
		{"the same event again", "evt_a", "customer.subscription.created", t0, "active", false, "price_songbird_month", catalog.Songbird, "active", 2},
		{"upgraded", "evt_b", "customer.subscription.updated", t0.Add(10 * time.Second), "active", false, "price_flock_month", catalog.Flock, "active", 3},
		{"an older event arrives late", "evt_c", "customer.subscription.updated", t0.Add(5 * time.Second), "active", false, "price_songbird_month", catalog.Flock, "active", 3},
		{"cancel at period end keeps the plan", "evt_d", "customer.subscription.updated", t0.Add(20 * time.Second), "active", true, "price_flock_month", catalog.Flock, "active", 3},
		{"the period ends", "evt_e", "customer.subscription.deleted", t0.Add(30 * time.Second), "canceled", true, "price_flock_month", catalog.Nestling, "canceled", 4},
	}
	for _, s := range steps {
		if err := f.deliver(t, s.id, s.typ, s.at, f.sub(s.status, s.cancel, s.price, t0)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		st := f.state(t)
		if st.Account.Plan != s.plan || st.Subscription == nil || st.Subscription.Status != s.subStatus {
			t.Fatalf("%s: plan %s, subscription %+v", s.name, st.Account.Plan, st.Subscription)
		}
		if n := len(f.rec.published()); n != s.events {
			t.Fatalf("%s: %d plan_changed events, want %d", s.name, n, s.events)
		}
	}
	checkEvent(t, f.rec.published()[3], f.account, catalog.Nestling, 4)
}

func TestUnpaidFallsBackToNestlingKeepingTheSubscription(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	if err := f.deliver(t, stripetest.EventID(), "customer.subscription.created", t0, f.sub("active", false, "price_flock_year", t0)); err != nil {
		t.Fatal(err)
	}
	if err := f.deliver(t, stripetest.EventID(), "customer.subscription.updated", t0.Add(time.Minute), f.sub("unpaid", false, "price_flock_year", t0)); err != nil {
		t.Fatal(err)
	}
	st := f.state(t)
	if st.Account.Plan != catalog.Nestling || st.Subscription.Plan != catalog.Flock || st.Subscription.Status != "unpaid" || st.Subscription.Interval != catalog.Yearly {
		t.Fatalf("plan %s, subscription %+v", st.Account.Plan, st.Subscription)
	}
	// Paid again: the plan comes back.
	if err := f.deliver(t, stripetest.EventID(), "customer.subscription.updated", t0.Add(2*time.Minute), f.sub("active", false, "price_flock_year", t0)); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t); st.Account.Plan != catalog.Flock {
		t.Fatalf("after payment: %s", st.Account.Plan)
	}
}

func TestABadSignatureChangesNothing(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	body := stripetest.Event("evt_x", "customer.subscription.created", t0, f.sub("active", false, "price_flock_month", t0))
	cases := map[string]string{
		"tampered body":       stripetest.Sign(body, whsec),
		"another secret":      stripetest.Sign(body, "whsec_other"),
		"signed too long ago": stripetest.SignAt(body, whsec, time.Now().Add(-6*time.Minute)),
		"no signature":        "",
	}
	for name, sig := range cases {
		payload := body
		if name == "tampered body" {
			payload = []byte(string(body[:len(body)-1]) + " }")
		}
		if err := f.svc.ApplyWebhook(ctx, payload, sig); !errors.Is(err, usecase.ErrInvalidSignature) {
			t.Fatalf("%s: %v, want ErrInvalidSignature", name, err)
		}
	}
	if st := f.state(t); st.Account.Plan != catalog.Nestling || st.Subscription != nil || len(f.rec.published()) != 1 {
		t.Fatalf("a refused delivery changed the account: %+v", st)
	}
	// The untouched delivery, signed within the tolerance, is applied.
	if err := f.svc.ApplyWebhook(ctx, body, stripetest.SignAt(body, whsec, time.Now().Add(-4*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t); st.Account.Plan != catalog.Flock {
		t.Fatalf("plan %s", st.Account.Plan)
	}
}

func TestInvoicesAndCreditNotesFromEvents(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	sub := "sub_" + f.account.String()
	inv := func(status string) map[string]any {
		return stripetest.Invoice("in_"+f.account.String(), f.customer, sub, f.account, "TORI-0042", status, 900, 156, t0)
	}
	for _, e := range []struct {
		typ    string
		at     time.Time
		status string
	}{
		{"invoice.finalized", t0, "open"},
		{"invoice.paid", t0.Add(2 * time.Minute), "paid"},
		{"invoice.payment_failed", t0.Add(time.Minute), "open"}, // older, arrives last
	} {
		if err := f.deliver(t, stripetest.EventID(), e.typ, e.at, inv(e.status)); err != nil {
			t.Fatal(err)
		}
	}
	// A credit note names no account: it is matched by its customer.
	if err := f.deliver(t, stripetest.EventID(), "credit_note.created", t0.Add(time.Hour),
		stripetest.CreditNote("cn_"+f.account.String(), "in_"+f.account.String(), f.customer, "TORI-0042-CN-01", 900, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	st := f.state(t)
	if len(st.Invoices) != 1 {
		t.Fatalf("invoices %+v", st.Invoices)
	}
	got := st.Invoices[0]
	if got.Status != "paid" || got.Number != "TORI-0042" || got.Total != 900 || got.VATRate != 21 ||
		len(got.CreditNotes) != 1 || got.CreditNotes[0].Total != 900 {
		t.Fatalf("invoice %+v", got)
	}
}

func TestEventsOfUnknownAccountsAreAcknowledgedAndIgnored(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	cn := stripetest.CreditNote("cn_stray", "in_stray", "cus_nobody", "X-1", 100, t0)
	if err := f.deliver(t, stripetest.EventID(), "credit_note.created", t0, cn); err != nil {
		t.Fatal(err)
	}
	if err := f.deliver(t, stripetest.EventID(), "payout.paid", t0, map[string]any{"id": "po_1", "object": "payout"}); err != nil {
		t.Fatal(err)
	}
}
