package busapi_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
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
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// The consumers over a real broker: the apps' life, plan changes and a zone's reports drive
// the deploys service, and its zone commands go out under the zone's routing key.
func TestConsumersDriveDeploys(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	conn := testinfra.DialBus(t, testinfra.BusConfig(t), log)
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Log: log})
	// Events published before a queue is bound route nowhere: wait for every consumer.
	subs := busapi.Subscriptions(svc, store.Bind)
	var bound atomic.Int32
	for _, sub := range subs {
		if sub.Queue == busapi.QueuePlans {
			sub.Prefetch = 1 // one at a time, in queue order: the marker below relies on it
		}
		var once sync.Once // it fires again after a reconnect; only the first matters here
		sub.Ready = func() { once.Do(func() { bound.Add(1) }) }
		testinfra.Background(t, sub.Queue, func(ctx context.Context) error { return conn.Consume(ctx, pool, sub) })
	}
	testinfra.Eventually(t, 15*time.Second, "consumers to subscribe", func() bool { return int(bound.Load()) == len(subs) })
	testinfra.Background(t, "outbox relay", bus.NewRelay(conn, pool, log).Run)

	// Publishing through this service's own outbox reaches its own consumers like any event.
	publish := func(key string, m proto.Message) {
		t.Helper()
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, key, m) }); err != nil {
			t.Fatal(err)
		}
	}
	appID, account := uuid.NewString(), uuid.NewString()
	publish(billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: account, Plan: "flock", Version: 3,
		Limits: &billingv1.PlanLimits{ConcurrentDeploys: 5, UploadBytes: 1 << 30, BuildMinutes: 45, MinScale: 1, Cpu: 2}})
	publish(appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: appID, AccountId: account, Slug: "web", Kind: "static", Zone: "eu-1", CreatedAt: timestamppb.Now()})
	testinfra.Eventually(t, 15*time.Second, "plan and app copies", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM apps WHERE id = $1) + (SELECT count(*) FROM plans WHERE account_id = $2 AND plan = 'flock')`, appID, account).Scan(&n)
		return n == 2
	})
	// A late, older plan event does not overwrite the newer copy: once it is on the broker, a
	// marker account's plan sent after it through the same queue arrives, and the copy is
	// still flock.
	publish(billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: account, Plan: "nestling", Version: 1, Limits: &billingv1.PlanLimits{}})
	testinfra.Eventually(t, 15*time.Second, "the older plan event to reach the broker", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&n)
		return n == 0
	})
	marker := uuid.NewString()
	publish(billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: marker, Plan: "songbird", Version: 1, Limits: &billingv1.PlanLimits{}})
	testinfra.Eventually(t, 15*time.Second, "the marker plan", func() bool {
		_, ok, _ := store.New(pool).Plan(ctx, marker)
		return ok
	})
	if p, _, _ := store.New(pool).Plan(ctx, account); p.Name != "flock" {
		t.Fatalf("plan %+v", p)
	}

	id := uuid.Must(uuid.NewV7()).String()
	err := svc.Store().InTx(ctx, func(tx usecase.Tx) error {
		now := time.Now().UTC()
		return tx.Insert(ctx, &deploy.Deploy{ID: id, AppID: appID, AccountID: account, Kind: deploy.KindStatic, Status: deploy.Building, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	publish(zonebus.KeyDeployProgressed, &zonev1.DeployProgress{DeployId: id, AppId: appID, Zone: "eu-1", Step: zonev1.DeployStep_DEPLOY_STEP_READY})
	status := func() string {
		d, err := svc.Store().Deploy(ctx, id)
		if err != nil {
			return err.Error()
		}
		return string(d.Status)
	}
	// The activation command went out to the app's zone, confirmed by the broker; the deploy
	// waits for the zone's word that it serves the revision.
	testinfra.Eventually(t, 15*time.Second, "the activate command to be published", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE routing_key = 'zone.eu-1.activate' AND sent_at IS NOT NULL`).Scan(&n)
		return n == 1
	})
	if s := status(); s != "releasing" {
		t.Fatalf("ready deploy is %s before its zone activated it", s)
	}
	publish(zonebus.KeyDeployProgressed, &zonev1.DeployProgress{DeployId: id, AppId: appID, Zone: "eu-1", Step: zonev1.DeployStep_DEPLOY_STEP_ACTIVATED})
	testinfra.Eventually(t, 15*time.Second, "the deploy to go live", func() bool { return status() == "live" })

	publish(appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: appID, AccountId: account, Slug: "web"})
	testinfra.Eventually(t, 15*time.Second, "the app to disappear", func() bool {
		_, err := svc.Store().AppBySlug(ctx, account, "web")
		return err == deploy.ErrAppNotFound
	})
}
