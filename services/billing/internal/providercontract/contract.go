// Package providercontract is the contract every usecase.Provider keeps: the Stripe adapter
// against stripe-mock and the fake provider both run it, so the fake the use-case tests lean
// on behaves as the real adapter does where both can be checked. stripe-mock keeps no state,
// so the contract checks shapes (ids, URLs, statuses), not that a created object is read back.
package providercontract

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/usecase"
	"tori.dev/services/billing/internal/vat"
)

// Run checks p against the contract.
func Run(t *testing.T, p usecase.Provider) {
	ctx := context.Background()
	account := uuid.Must(uuid.NewV7())

	customerID, err := p.CreateCustomer(ctx, usecase.NewCustomer{AccountID: account, Email: "ada@example.com"})
	if err != nil || customerID == "" {
		t.Fatalf("CreateCustomer = %q, %v", customerID, err)
	}

	t.Run("checkout answers an absolute URL", func(t *testing.T) {
		u, err := p.CreateCheckoutSession(ctx, usecase.NewCheckout{
			AccountID: account, CustomerID: customerID, PriceID: "price_songbird_month",
			SuccessURL: "http://127.0.0.1:5173/billing?checkout=done", CancelURL: "http://127.0.0.1:5173/billing",
		})
		checkURL(t, "checkout", u, err)
	})
	t.Run("cancelling an unknown subscription is not found or done", func(t *testing.T) {
		// stripe-mock answers any id; the fake knows its own.
		if err := p.CancelSubscription(ctx, "sub_contract"); err != nil && !errors.Is(err, usecase.ErrProviderNotFound) {
			t.Fatalf("CancelSubscription = %v", err)
		}
	})
	t.Run("portal answers an absolute URL", func(t *testing.T) {
		u, err := p.CreatePortalSession(ctx, customerID, "http://127.0.0.1:5173/billing")
		checkURL(t, "portal", u, err)
	})
	t.Run("customer reads back by id", func(t *testing.T) {
		c, err := p.Customer(ctx, customerID)
		if err != nil || c.ID != customerID {
			t.Fatalf("Customer(%q) = %+v, %v", customerID, c, err)
		}
		if c.VATID != "" && !c.Business {
			t.Fatalf("a customer with a VAT ID is not a business: %+v", c)
		}
	})
	t.Run("subscriptions are well formed", func(t *testing.T) {
		subs, err := p.Subscriptions(ctx, customerID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			if s.ID == "" || s.Status == "" || s.CustomerID == "" {
				t.Fatalf("subscription %+v", s)
			}
		}
	})
	t.Run("VAT terms apply, and apply again", func(t *testing.T) {
		target := usecase.TermsTarget{SubscriptionID: "sub_contract", CustomerID: customerID, Currency: "eur"}
		for _, terms := range []vat.Terms{
			{Kind: vat.EUConsumer, Country: "DE", RateBasis: 1900},
			{Kind: vat.ReverseCharge, Country: "DE", DiscountCents: 503},
			{Kind: vat.OutsideEU, Country: "US"},
			{Kind: vat.EUConsumer, Country: "DE", RateBasis: 1900},
		} {
			if err := p.ApplyTerms(ctx, target, terms); err != nil {
				t.Fatalf("ApplyTerms(%s): %v", terms.Key(), err)
			}
		}
	})
	t.Run("invoices and their credit notes are well formed", func(t *testing.T) {
		invs, err := p.Invoices(ctx, customerID)
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range invs {
			if inv.ID == "" || inv.Status == "" || inv.Currency == "" || inv.Created.IsZero() {
				t.Fatalf("invoice %+v", inv)
			}
			notes, err := p.CreditNotes(ctx, inv.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range notes {
				if n.ID == "" || n.Created.IsZero() {
					t.Fatalf("credit note %+v", n)
				}
			}
		}
	})
}

func checkURL(t *testing.T, what, u string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	parsed, perr := url.Parse(u)
	if perr != nil || !parsed.IsAbs() || parsed.Host == "" {
		t.Fatalf("%s URL %q is not absolute", what, u)
	}
}
