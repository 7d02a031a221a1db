package stripepay_test

import (
	"testing"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/providercontract"
	"tori.dev/services/billing/internal/stripepay"
)

func TestStripeAdapterKeepsTheProviderContractAgainstStripeMock(t *testing.T) {
	url := testinfra.StripeMock(t)
	providercontract.Run(t, stripepay.New(stripepay.Config{SecretKey: "sk_test_tori", APIURL: url}))
}

// stripe-mock answers every list with one fixture object: the adapter must read the fields
// billing relies on out of the API version it is pinned to.
func TestStripeAdapterReadsTheFieldsBillingUses(t *testing.T) {
	c := stripepay.New(stripepay.Config{SecretKey: "sk_test_tori", APIURL: testinfra.StripeMock(t)})
	ctx := t.Context()
	subs, err := c.Subscriptions(ctx, "cus_tori")
	if err != nil || len(subs) == 0 {
		t.Fatalf("subscriptions %v, %v", subs, err)
	}
	if s := subs[0]; s.PriceID == "" || s.CurrentPeriodEnd.IsZero() || s.Created.IsZero() {
		t.Fatalf("subscription read without its price or period: %+v", s)
	}
	invs, err := c.Invoices(ctx, "cus_tori")
	if err != nil || len(invs) == 0 {
		t.Fatalf("invoices %v, %v", invs, err)
	}
	if inv := invs[0]; inv.CustomerID == "" || inv.Created.IsZero() {
		t.Fatalf("invoice %+v", inv)
	}
}
