package usecase_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/providerfake"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
	"tori.dev/services/billing/internal/vat"
)

// The provider is made to charge what the VAT rules say, and again whenever the customer's
// details change: a German consumer the listed price with 19 % included, then (with a VAT ID
// VIES confirms) the price less Czech VAT under reverse charge, then, moved outside the EU,
// the listed price with none. Terms already applied are not sent again.
func TestVATTermsFollowTheCustomer(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	fake := providerfake.New()
	vies := vat.FakeVIES{Valid: map[string]bool{"DE123456789": true}}
	svc := usecase.New(st, usecase.WithPayments(usecase.Payments{Provider: fake, Prices: testPrices, VIES: vies, ConsoleURL: "http://console.test"}))
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, err := svc.Portal(ctx, id); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Customer(ctx, id)
	now := time.Now().UTC().Truncate(time.Second)
	fake.PutSubscription(usecase.Subscription{ID: "sub_" + id.String(), CustomerID: c.CustomerID, AccountID: id, PriceID: "price_flock_month",
		Status: "active", CurrentPeriodStart: now, CurrentPeriodEnd: now.AddDate(0, 1, 0), Created: now})

	apply := func(customer usecase.Customer, want vat.Terms, changed int64) {
		t.Helper()
		customer.ID = c.CustomerID
		fake.SetCustomer(customer)
		if _, err := svc.Sync(ctx, id); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.ApplyVATTerms(ctx); err != nil || n != changed {
			t.Fatalf("%+v: changed %d, %v; want %d", customer, n, err, changed)
		}
		if got, ok := fake.AppliedTerms("sub_" + id.String()); !ok || got != want {
			t.Fatalf("%+v: applied %+v, want %+v", customer, got, want)
		}
	}
	consumer := vat.Terms{Kind: vat.EUConsumer, Country: "DE", RateBasis: 1900}
	apply(usecase.Customer{Country: "DE"}, consumer, 1)
	apply(usecase.Customer{Country: "DE"}, consumer, 0) // the same terms: nothing sent
	apply(usecase.Customer{Country: "DE", VATID: "DE123456789", Business: true},
		vat.Terms{Kind: vat.ReverseCharge, Country: "DE", DiscountCents: 2900 - 2397}, 1)
	apply(usecase.Customer{Country: "US"}, vat.Terms{Kind: vat.OutsideEU, Country: "US"}, 1)
}

// Unconfigured billing applies nothing and asks no provider.
func TestVATTermsNeedPaidPlans(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	if n, err := svc.ApplyVATTerms(ctx); err != nil || n != 0 {
		t.Fatalf("unconfigured: %d, %v", n, err)
	}
}
