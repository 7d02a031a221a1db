package app_test

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
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/revision"
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
	if err := pgstore.InTx(ctx, z.pool, func(tx pgx.Tx) error { return handle(ctx, tx, d) }); err != nil {
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
	z.command(func(ctx context.Context, tx app.Tx) error { return tx.Want(ctx, d, true) })
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
		err := handle(context.Background(), nil, bus.Delivery{RoutingKey: appsbus.KeyDomainDeactivated, Body: body})
		if !bus.IsPermanent(err) {
			t.Errorf("%v: %v, want a permanent error", m, err)
		}
	}
}
