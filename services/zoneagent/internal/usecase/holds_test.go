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
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// deliver hands one message to the zone's consumer of the queue ending in suffix, in a
// transaction, as the bus would, then brings the edge up to date at once.
func (z *zone) deliver(suffix, key string, m proto.Message) {
	z.t.Helper()
	var handle bus.TxHandler
	for _, s := range busapi.Subscriptions(z.agent) {
		if strings.HasSuffix(s.Queue, suffix) {
			handle = s.Handle
		}
	}
	if handle == nil {
		z.t.Fatalf("the zone has no consumer of %s", suffix)
	}
	body, err := proto.Marshal(m)
	if err != nil {
		z.t.Fatal(err)
	}
	ctx := context.Background()
	d := bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Body: body, Attempt: 1}
	if err := pgstore.InTx(ctx, z.pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
		z.t.Fatalf("deliver %s: %v", key, err)
	}
	if err := z.agent.ReloadRoutes(ctx); err != nil {
		z.t.Fatal(err)
	}
}

// From the hold's serving_stops_from every hostname of every app of the account answers 503
// with a page that says only that the site is paused; a newer word lifts it, an older one
// changes nothing, and other accounts' apps are untouched. Nothing is deleted.
func TestAHoldPausesEveryHostnameOfTheAccount(t *testing.T) {
	z := newZone(t)
	account, other := uuid.NewString(), uuid.NewString()
	deploy := func(accountID, slug string) string {
		appID := uuid.NewString()
		id := uuid.Must(uuid.NewV7()).String()
		z.deliver(".commands", zonebus.CommandKey(storetest.Zone, zonebus.CommandDeploy), &zonev1.StartRevision{
			DeployId: id, AppId: appID, AccountId: accountID, Slug: slug, Kind: string(revision.KindStatic),
			ArtifactKey: z.putSite(appID, map[string]string{"index.html": slug}),
		})
		z.waitState(id, revision.StateReady)
		z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, id, true) })
		z.waitServes(slug+".apps.test", slug)
		return appID
	}
	shop := deploy(account, "shop")
	deploy(other, "neighbour")
	z.deliver(".apps", appsbus.KeyDomainActivated, &appsv1.DomainActivated{AppId: shop, AccountId: account, Slug: "shop", Hostname: "shop.example.com", ActivatedAt: timestamppb.Now()})
	z.waitServes("shop.example.com", "shop")

	hold := func(version int64, stopsFrom *time.Time) {
		ev := &billingv1.AccountHoldChanged{AccountId: account, Active: stopsFrom != nil, Version: version, ChangedAt: timestamppb.Now()}
		if stopsFrom != nil {
			ev.ServingStopsFrom = timestamppb.New(*stopsFrom)
		}
		z.deliver(".holds", billingbus.KeyHoldChanged, ev)
	}
	served := func(host, body string) {
		t.Helper()
		if status, got := z.get(host, "/"); status != 200 || got != body {
			t.Fatalf("%s: %d %q, want it served", host, status, got)
		}
	}
	pausedPage := func(host string) {
		t.Helper()
		status, got := z.get(host, "/")
		if status != 503 || !strings.Contains(got, "This site is paused") {
			t.Fatalf("%s: %d %q, want the paused page", host, status, got)
		}
		for _, why := range []string{"pay", "bill", "invoice", "hold"} {
			if strings.Contains(strings.ToLower(got), why) {
				t.Fatalf("%s: the paused page says why (%q)", host, why)
			}
		}
	}

	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Minute)
	hold(1, &later) // day 0: the hold is on, serving stops in the future
	served("shop.apps.test", "shop")
	hold(2, &earlier) // day 14
	pausedPage("shop.apps.test")
	pausedPage("shop.example.com")
	served("neighbour.apps.test", "neighbour")
	hold(1, &later) // a stale event, redelivered late
	pausedPage("shop.apps.test")
	hold(3, nil) // paid
	served("shop.apps.test", "shop")
	served("shop.example.com", "shop")
}
