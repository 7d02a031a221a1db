package busapi_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// Billing's holds reach the deploys service's copy, from billing's own broker user, and a
// late, older announcement never overwrites a newer one.
func TestHoldsFromBillingAreCopied(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	cfg := testinfra.BusConfig(t)
	consumer := testinfra.DialBusAs(t, cfg, bus.PrincipalDeploys, log)
	billing := testinfra.DialBusAs(t, cfg, bus.PrincipalBilling, log)
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Log: log})
	var sub bus.Subscription
	for _, s := range busapi.Subscriptions(svc, store.Bind) {
		if s.Queue == busapi.QueueHolds {
			sub = s
		}
	}
	if sub.Queue == "" {
		t.Fatal("no consumer of billing's holds")
	}
	sub.Prefetch = 1 // in queue order: the marker below relies on it
	bound := make(chan struct{})
	sub.Ready = func() {
		select {
		case <-bound:
		default:
			close(bound)
		}
	}
	testinfra.Background(t, sub.Queue, func(ctx context.Context) error { return consumer.Consume(ctx, pool, sub) })
	select {
	case <-bound:
	case <-time.After(15 * time.Second):
		t.Fatal("the holds consumer did not subscribe")
	}
	// The outbox is relayed by billing's connection: what leaves carries billing's user id.
	testinfra.Background(t, "outbox relay as billing", bus.NewRelay(billing, pool, log).Run)
	publish := func(m *billingv1.AccountHoldChanged) {
		t.Helper()
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, billingbus.KeyHoldChanged, m) }); err != nil {
			t.Fatal(err)
		}
	}
	account := uuid.NewString()
	since := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	publish(&billingv1.AccountHoldChanged{AccountId: account, Active: true, Version: 2, Since: timestamppb.New(since),
		DeploysRefusedFrom: timestamppb.New(since.Add(7 * day)), ServingStopsFrom: timestamppb.New(since.Add(14 * day)),
		ReclaimableFrom: timestamppb.New(since.Add(30 * day))})
	testinfra.Eventually(t, 15*time.Second, "the hold copy", func() bool {
		h, ok, _ := store.New(pool).Hold(ctx, account)
		return ok && h.Active && h.Since.Equal(since) && h.DeploysRefusedFrom.Equal(since.Add(7*day)) && h.Version == 2
	})
	// An older announcement (version 1, no hold) after it, then a marker account behind it.
	publish(&billingv1.AccountHoldChanged{AccountId: account, Active: false, Version: 1})
	marker := uuid.NewString()
	publish(&billingv1.AccountHoldChanged{AccountId: marker, Active: false, Version: 1})
	testinfra.Eventually(t, 15*time.Second, "the marker hold", func() bool {
		_, ok, _ := store.New(pool).Hold(ctx, marker)
		return ok
	})
	if h, _, _ := store.New(pool).Hold(ctx, account); !h.Active || h.Version != 2 {
		t.Fatalf("an older announcement overwrote the hold: %+v", h)
	}
	// Payment: the newer announcement lifts it.
	publish(&billingv1.AccountHoldChanged{AccountId: account, Active: false, Version: 3})
	testinfra.Eventually(t, 15*time.Second, "the hold to lift", func() bool {
		h, _, _ := store.New(pool).Hold(ctx, account)
		return !h.Active && h.Version == 3 && h.Since.IsZero()
	})
}
