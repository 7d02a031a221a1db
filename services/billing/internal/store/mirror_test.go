package store_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/usecase"
)

func TestAnOlderReportNeverOverwritesANewerOne(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	id := uuid.Must(uuid.NewV7())
	put := func(status string, observed int64) bool {
		t.Helper()
		var applied bool
		err := s.InTx(ctx, func(tx usecase.Tx) error {
			var err error
			applied, err = tx.PutSubscription(ctx, mirror.Subscription{ID: "sub_" + id.String(), AccountID: id, CustomerID: "cus_1",
				Plan: catalog.Songbird, Interval: catalog.Monthly, Status: status, Created: at(1), ObservedAt: at(observed)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return applied
	}
	steps := []struct {
		status   string
		observed int64
		applied  bool
		want     string
	}{
		{"active", 10, true, "active"},
		{"past_due", 30, true, "past_due"},
		{"active", 20, false, "past_due"}, // late delivery of an older event
		{"unpaid", 30, true, "unpaid"},    // same second: the later arrival wins
	}
	for _, st := range steps {
		if got := put(st.status, st.observed); got != st.applied {
			t.Fatalf("%s at %d: applied %v", st.status, st.observed, got)
		}
		subs, err := s.Subscriptions(ctx, id)
		if err != nil || len(subs) != 1 || subs[0].Status != st.want {
			t.Fatalf("after %s at %d: %+v, %v", st.status, st.observed, subs, err)
		}
	}

	inv := mirror.Invoice{ID: "in_" + id.String(), AccountID: id, Status: "open", Total: 900, Currency: "eur", Created: at(1), ObservedAt: at(50)}
	older := inv
	older.Status, older.ObservedAt = "draft", at(40)
	for _, v := range []mirror.Invoice{inv, older} {
		if err := s.InTx(ctx, func(tx usecase.Tx) error { _, err := tx.PutInvoice(ctx, v); return err }); err != nil {
			t.Fatal(err)
		}
	}
	invs, err := s.Invoices(ctx, id)
	if err != nil || len(invs) != 1 || invs[0].Status != "open" {
		t.Fatalf("invoices %+v, %v", invs, err)
	}
}

func TestCustomersAndEvents(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	id := uuid.Must(uuid.NewV7())
	if _, err := s.Customer(ctx, id); !errors.Is(err, mirror.ErrNotFound) {
		t.Fatalf("no customer yet: %v", err)
	}
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		for i, cid := range []string{"cus_a" + id.String(), "cus_b" + id.String()} {
			inserted, err := tx.InsertCustomer(ctx, mirror.Customer{AccountID: id, CustomerID: cid}, at(1))
			if err != nil || inserted != (i == 0) {
				t.Fatalf("insert %s: %v, %v", cid, inserted, err)
			}
		}
		c, err := tx.CustomerByProviderID(ctx, "cus_a"+id.String())
		if err != nil || c.AccountID != id {
			t.Fatalf("by provider id: %+v, %v", c, err)
		}
		for i := range 2 {
			first, err := tx.MarkEvent(ctx, "evt_"+id.String(), "invoice.paid", at(2))
			if err != nil || first != (i == 0) {
				t.Fatalf("mark event %d: %v, %v", i, first, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
