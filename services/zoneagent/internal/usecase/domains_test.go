package usecase_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

// appsHandler is the zone's consumer of apps events, as the bus runs it.
func (z *zone) appsHandler() bus.TxHandler {
	z.t.Helper()
	for _, s := range busapi.Subscriptions(z.agent) {
		if strings.HasSuffix(s.Queue, ".apps") {
			return s.Handle
		}
	}
	z.t.Fatal("the zone has no consumer of apps events")
	return nil
}

// deliverAppsEvent hands one apps event to that consumer, in a transaction, as the bus would.
func (z *zone) deliverAppsEvent(key string, m proto.Message) {
	z.t.Helper()
	handle := z.appsHandler()
	body, err := proto.Marshal(m)
	if err != nil {
		z.t.Fatal(err)
	}
	d := bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Body: body, Attempt: 1}
	ctx := context.Background()
	if err := pgstore.InTx(ctx, z.pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
		z.t.Fatalf("deliver %s: %v", key, err)
	}
}

// A custom hostname the apps service returns to pending (its TXT record missing too long) is
// no longer routed by the edge, while the app goes on serving at its own address; verified
// again, it is routed again.
func TestDeactivatedHostnameIsNoLongerServed(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	d := z.start(appID, "shop", z.putSite(appID, map[string]string{"index.html": "shop"}))
	z.waitState(d, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, d, true) })
	z.waitState(d, revision.StateActive)
	z.waitServes("shop.apps.test", "shop")

	const host = "shop.example.com"
	ev := func() *appsv1.DomainActivated {
		return &appsv1.DomainActivated{AppId: appID, AccountId: uuid.NewString(), Slug: "shop", Hostname: host, ActivatedAt: timestamppb.Now()}
	}
	z.deliverAppsEvent(appsbus.KeyDomainActivated, ev())
	z.waitServes(host, "shop")

	z.deliverAppsEvent(appsbus.KeyDomainDeactivated, &appsv1.DomainDeactivated{
		AppId: appID, Slug: "shop", Hostname: host, DeactivatedAt: timestamppb.Now(),
	})
	testinfra.Eventually(t, 10*time.Second, host+" no longer routed", func() bool {
		status, body := z.get(host, "/")
		return status == 404 && body == "not found\n"
	})
	if status, body := z.get("shop.apps.test", "/"); status != 200 || body != "shop" {
		t.Fatalf("the app itself: %d %q", status, body)
	}

	z.deliverAppsEvent(appsbus.KeyDomainActivated, ev())
	z.waitServes(host, "shop")
}

// A deactivation naming no valid app id is refused for good, before it touches the store.
func TestDeactivationWithABadAppIDIsPermanent(t *testing.T) {
	z := newZone(t)
	handle := z.appsHandler()
	for _, m := range []*appsv1.DomainDeactivated{
		{AppId: "../../etc", Hostname: "shop.example.com"},
		{AppId: uuid.NewString()},
	} {
		body, _ := proto.Marshal(m)
		err := handle(context.Background(), bus.Tx{}, bus.Delivery{RoutingKey: appsbus.KeyDomainDeactivated, Body: body})
		if !bus.IsPermanent(err) {
			t.Errorf("%v: %v, want a permanent error", m, err)
		}
	}
}

// Domain events change a hostname in the order they happened at the apps service, whatever
// order they arrive in (a consumer's workers commit concurrently, a retried event comes late):
// an older activation never brings back a hostname removed after it, nor takes it from the
// app that claimed it since; and a deleted app's hostnames stay gone.
func TestDomainEventsApplyInTheOrderTheyHappened(t *testing.T) {
	z := newZone(t)
	a, b, gone := uuid.NewString(), uuid.NewString(), uuid.NewString()
	t0 := time.Now().Add(-time.Hour)
	at := func(minutes int) *timestamppb.Timestamp {
		return timestamppb.New(t0.Add(time.Duration(minutes) * time.Minute))
	}
	activated := func(app, host string, minute int) {
		z.deliverAppsEvent(appsbus.KeyDomainActivated, &appsv1.DomainActivated{AppId: app, Slug: "s", Hostname: host, ActivatedAt: at(minute)})
	}
	removed := func(app, host string, minute int) {
		z.deliverAppsEvent(appsbus.KeyDomainRemoved, &appsv1.DomainRemoved{AppId: app, Slug: "s", Hostname: host, RemovedAt: at(minute)})
	}
	deactivated := func(app, host string, minute int) {
		z.deliverAppsEvent(appsbus.KeyDomainDeactivated, &appsv1.DomainDeactivated{AppId: app, Slug: "s", Hostname: host, DeactivatedAt: at(minute)})
	}

	// Removed at 2, its activation at 1 arrives after: not served.
	removed(a, "late.example.com", 2)
	activated(a, "late.example.com", 1)
	// a had it (1), gave it up (2), b claimed it (3); a's events arrive last: b's.
	activated(b, "moved.example.com", 3)
	activated(a, "moved.example.com", 1)
	removed(a, "moved.example.com", 2)
	// Deactivated at 5 after an activation at 4 arriving in order, then re-verified at 6
	// arriving before a stale copy of the deactivation's time: served.
	activated(a, "back.example.com", 4)
	deactivated(a, "back.example.com", 5)
	activated(a, "back.example.com", 6)
	deactivated(a, "back.example.com", 5)
	// In order, as ever: served.
	activated(a, "plain.example.com", 1)
	// The app deleted at 8: its hostname goes, and neither an older activation nor one for
	// the deleted app arriving later brings it back.
	activated(gone, "deleted.example.com", 7)
	z.deliverAppsEvent(appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: gone, Slug: "s", DeletedAt: at(8)})
	activated(gone, "deleted.example.com", 7)
	activated(gone, "after.example.com", 9)

	got, err := z.st.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	for _, d := range got {
		served[d.Hostname] = d.AppID
	}
	want := map[string]string{"moved.example.com": b, "back.example.com": a, "plain.example.com": a}
	if len(served) != len(want) {
		t.Fatalf("served %v, want %v", served, want)
	}
	for host, app := range want {
		if served[host] != app {
			t.Errorf("%s served for %q, want %q (all: %v)", host, served[host], app, served)
		}
	}
}
