package usecase_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/providerfake"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

var testPrices = usecase.Prices{
	{Plan: catalog.Songbird, Interval: catalog.Monthly}: "price_songbird_month",
	{Plan: catalog.Songbird, Interval: catalog.Yearly}:  "price_songbird_year",
	{Plan: catalog.Flock, Interval: catalog.Monthly}:    "price_flock_month",
	{Plan: catalog.Flock, Interval: catalog.Yearly}:     "price_flock_year",
}

// newPaidService is the service with paid plans on, over the FAKE provider.
func newPaidService(t *testing.T) (*usecase.Service, usecase.Store, *recorder, *providerfake.Provider) {
	t.Helper()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	fake := providerfake.New()
	svc := usecase.New(st, usecase.WithPayments(usecase.Payments{Provider: fake, Prices: testPrices, ConsoleURL: "http://console.test"}))
	return svc, st, rec, fake
}

func TestCheckoutCreatesTheCustomerOnceAndTagsEverythingWithTheAccount(t *testing.T) {
	t.Parallel()
	svc, st, _, fake := newPaidService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")

	for _, req := range []struct{ plan, interval, price string }{
		{"songbird", "month", "price_songbird_month"},
		{"flock", "year", "price_flock_year"},
	} {
		url, err := svc.Checkout(ctx, id, req.plan, req.interval)
		if err != nil || url == "" {
			t.Fatalf("Checkout(%s, %s) = %q, %v", req.plan, req.interval, url, err)
		}
		last := fake.Checkouts[len(fake.Checkouts)-1]
		if last.AccountID != id || last.PriceID != req.price || last.SuccessURL != "http://console.test/billing?checkout=done" {
			t.Fatalf("checkout session %+v", last)
		}
	}
	if fake.Checkouts[0].CustomerID != fake.Checkouts[1].CustomerID {
		t.Fatal("a second checkout created a second customer")
	}
	c, err := st.Customer(ctx, id)
	if err != nil || c.CustomerID != fake.Checkouts[0].CustomerID {
		t.Fatalf("recorded customer %+v, %v", c, err)
	}
	pc, _ := fake.Customer(ctx, c.CustomerID)
	if pc.AccountID != id {
		t.Fatalf("provider customer %+v does not carry the account", pc)
	}
	if url, err := svc.Portal(ctx, id); err != nil || url == "" {
		t.Fatalf("Portal = %q, %v", url, err)
	}
}

func TestCheckoutWhileSubscribedIsRefusedFromTheMirror(t *testing.T) {
	t.Parallel()
	svc, st, rec, fake := newPaidService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, err := svc.Checkout(ctx, id, "songbird", "month"); err != nil {
		t.Fatal(err)
	}
	customer := fake.Checkouts[0].CustomerID
	now := time.Now().UTC().Truncate(time.Second)
	fake.PutSubscription(usecase.Subscription{ID: "sub_1", CustomerID: customer, AccountID: id, PriceID: "price_songbird_month",
		Status: "active", CurrentPeriodStart: now, CurrentPeriodEnd: now.AddDate(0, 1, 0), Created: now})
	// Until Tori's mirror hears of the subscription, checkout is allowed: the provider is never
	// asked.
	if _, err := svc.Checkout(ctx, id, "flock", "month"); err != nil {
		t.Fatalf("checkout before the mirror knows: %v", err)
	}
	s, err := svc.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Account.Plan != catalog.Songbird || s.Subscription == nil || s.Subscription.Status != "active" || s.Subscription.Interval != catalog.Monthly {
		t.Fatalf("after sync: %+v", s)
	}
	checkEvent(t, rec.published()[len(rec.published())-1], id, catalog.Songbird, 2)
	if _, err := svc.Checkout(ctx, id, "flock", "month"); !errors.Is(err, usecase.ErrAlreadySubscribed) {
		t.Fatalf("second checkout: %v, want ErrAlreadySubscribed", err)
	}
	// A malformed request is still told so first.
	if _, err := svc.Checkout(ctx, id, "eagle", "month"); !errors.Is(err, catalog.ErrUnknownPlan) {
		t.Fatalf("bad plan while subscribed: %v", err)
	}
}

func TestSyncMirrorsInvoicesAndFollowsTheSubscription(t *testing.T) {
	t.Parallel()
	svc, st, rec, fake := newPaidService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")

	// Before the account has a customer, sync has nothing to read.
	s, err := svc.Sync(ctx, id)
	if err != nil || s.Customer != nil || s.Subscription != nil || len(s.Invoices) != 0 || !s.Configured {
		t.Fatalf("sync without a customer: %+v, %v", s, err)
	}
	if _, err := svc.Portal(ctx, id); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Customer(ctx, id)
	fake.SetCustomer(usecase.Customer{ID: c.CustomerID, AccountID: id, Country: "DE", VATID: "DE123456789", Business: true})
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	fake.PutSubscription(usecase.Subscription{ID: "sub_1", CustomerID: c.CustomerID, PriceID: "price_flock_year", Status: "active",
		CurrentPeriodStart: t0, CurrentPeriodEnd: t0.AddDate(1, 0, 0), Created: t0})
	fake.PutInvoice(usecase.Invoice{ID: "in_1", CustomerID: c.CustomerID, SubscriptionID: "sub_1", Number: "TORI-0001", Status: "paid",
		Total: 29000, TotalTax: 5033, Currency: "eur", HostedURL: "https://pay.test/in_1", PDFURL: "https://pay.test/in_1.pdf", Created: t0})
	fake.PutCreditNote(usecase.CreditNote{ID: "cn_1", InvoiceID: "in_1", Number: "TORI-0001-CN-01", Total: 1000, Created: t0.Add(time.Hour)})

	s, err = svc.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Account.Plan != catalog.Flock || s.Customer == nil || s.Customer.Country != "DE" || s.Customer.VATID != "DE123456789" || !s.Customer.Business {
		t.Fatalf("after sync: %+v customer %+v", s, s.Customer)
	}
	if len(s.Invoices) != 1 || s.Invoices[0].Number != "TORI-0001" || s.Invoices[0].VATRate != 21 ||
		len(s.Invoices[0].CreditNotes) != 1 || s.Invoices[0].CreditNotes[0].Total != 1000 {
		t.Fatalf("invoices %+v", s.Invoices)
	}
	// Every retry failed: the account falls back to nestling, the subscription is kept.
	fake.PutSubscription(usecase.Subscription{ID: "sub_1", CustomerID: c.CustomerID, PriceID: "price_flock_year", Status: "unpaid",
		CurrentPeriodStart: t0, CurrentPeriodEnd: t0.AddDate(1, 0, 0), Created: t0})
	if s, err = svc.Sync(ctx, id); err != nil || s.Account.Plan != catalog.Nestling || s.Subscription.Status != "unpaid" || s.Subscription.Plan != catalog.Flock {
		t.Fatalf("unpaid: %+v, %v", s, err)
	}
	checkEvent(t, rec.published()[len(rec.published())-1], id, catalog.Nestling, 3)
	// A sync that finds nothing new announces nothing.
	before := len(rec.published())
	if _, err := svc.Sync(ctx, id); err != nil || len(rec.published()) != before {
		t.Fatalf("a repeated sync announced %d events, %v", len(rec.published())-before, err)
	}
}

// An account whose plan an operator set, and which never subscribed, keeps it through sync.
func TestSyncLeavesAnAccountWithoutSubscriptionsAlone(t *testing.T) {
	t.Parallel()
	svc, st, _, _ := newPaidService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "flock"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Portal(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s, err := svc.Sync(ctx, id); err != nil || s.Account.Plan != catalog.Flock {
		t.Fatalf("sync: %+v, %v", s, err)
	}
}
