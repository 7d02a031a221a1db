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

// Sync checks the customer's VAT ID with VIES (a FAKE here) and states reverse charge on an
// invoice without VAT only when the rules put the customer under it.
func TestSyncChecksTheVATIDAndStatesReverseCharge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		country     string
		vatID       string
		valid       bool
		wantValid   bool
		wantReverse bool
	}{
		{"German business, VIES confirms", "DE", "DE123456789", true, true, true},
		{"German business, VIES refuses", "DE", "DE123456789", false, false, false},
		{"Czech business with a VAT ID", "CZ", "CZ12345678", true, true, false},
		{"consumer outside the EU", "US", "", false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			st := recordingStore{store.New(newPool(t)), rec}
			fake := providerfake.New()
			vies := vat.FakeVIES{Valid: map[string]bool{}}
			if tc.valid {
				vies.Valid[tc.vatID] = true
			}
			svc := usecase.New(st, usecase.WithPayments(usecase.Payments{Provider: fake, Prices: testPrices, VIES: vies, ConsoleURL: "http://console.test"}))
			id := uuid.Must(uuid.NewV7())
			register(t, svc, st, id, "ada@example.com")
			if _, err := svc.Portal(ctx, id); err != nil {
				t.Fatal(err)
			}
			c, _ := st.Customer(ctx, id)
			fake.SetCustomer(usecase.Customer{ID: c.CustomerID, Country: tc.country, VATID: tc.vatID, Business: tc.vatID != ""})
			fake.PutInvoice(usecase.Invoice{ID: "in_" + id.String(), CustomerID: c.CustomerID, Number: "T-1", Status: "paid",
				Total: 744, Currency: "eur", Created: time.Now().UTC().Truncate(time.Second)})
			s, err := svc.Sync(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Customer.VATIDValid != tc.wantValid || s.Invoices[0].ReverseCharge != tc.wantReverse {
				t.Fatalf("customer %+v, invoice %+v", s.Customer, s.Invoices[0])
			}
		})
	}
}

// While VIES is down the format check stands in and says so; a later round asks VIES again
// and records its verdict.
func TestVATIDsJudgedByFormatAreCheckedAgain(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	fake := providerfake.New()
	vies := &vat.FakeVIES{Down: true, Valid: map[string]bool{}}
	svc := usecase.New(st, usecase.WithPayments(usecase.Payments{Provider: fake, Prices: testPrices, VIES: vies, ConsoleURL: "http://console.test"}))
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, err := svc.Portal(ctx, id); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Customer(ctx, id)
	fake.SetCustomer(usecase.Customer{ID: c.CustomerID, Country: "DE", VATID: "DE123456789", Business: true})
	s, err := svc.Sync(ctx, id)
	if err != nil || !s.Customer.VATIDValid || !s.Customer.VATIDFormatOnly {
		t.Fatalf("while VIES is down: %+v, %v", s.Customer, err)
	}
	recheck := func(want int64) {
		t.Helper()
		if n, err := svc.RecheckVATIDs(ctx); err != nil || n != want {
			t.Fatalf("rechecked %d, %v; want %d", n, err, want)
		}
	}
	recheck(0) // still down
	vies.Down = false
	recheck(1)
	recheck(0)
	got, _ := st.Customer(ctx, id)
	if got.VATIDValid || got.VATIDFormatOnly {
		t.Fatalf("after VIES refused the ID: %+v", got)
	}
}
