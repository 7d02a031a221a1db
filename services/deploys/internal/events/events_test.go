package events_test

import (
	"context"
	"log/slog"
	"path/filepath"
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
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/events"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/service"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
)

// The consumers over a real broker: the apps' life, plan changes and a zone's reports drive
// the deploys service, and its zone commands go out under the zone's routing key.
func TestConsumersDriveDeploys(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	conn, err := bus.Dial(ctx, bus.Config{URL: testinfra.AMQPURL(t), Namespace: testinfra.Namespace(t) + ".", QueueType: "classic",
		QueueExpires: 10 * time.Minute, BaseBackoff: 20 * time.Millisecond}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := service.New(service.Deps{Store: store.New(pool), Objects: objs, Log: log})
	// Events published before a queue is bound route nowhere: wait for every consumer.
	subs := events.Subscriptions(svc)
	ready := make(chan struct{}, len(subs))
	for _, sub := range subs {
		sub.Ready = func() {
			select { // it fires again after a reconnect; only the first matters here
			case ready <- struct{}{}:
			default:
			}
		}
		go conn.Consume(ctx, pool, sub)
	}
	for range subs {
		select {
		case <-ready:
		case <-time.After(15 * time.Second):
			t.Fatal("consumers did not subscribe")
		}
	}
	go bus.NewRelay(conn, pool, log).Run(ctx)

	// Publishing through this service's own outbox reaches its own consumers like any event.
	publish := func(key string, m proto.Message) {
		t.Helper()
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, key, m) }); err != nil {
			t.Fatal(err)
		}
	}
	appID, account := uuid.NewString(), uuid.NewString()
	publish(events.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: account, Plan: "flock", Version: 3,
		Limits: &billingv1.PlanLimits{ConcurrentDeploys: 5, UploadBytes: 1 << 30, BuildMinutes: 45, MinScale: 1, Cpu: 2}})
	publish(events.KeyAppCreated, &appsv1.AppCreated{AppId: appID, AccountId: account, Slug: "web", Kind: "static", Zone: "eu-1", CreatedAt: timestamppb.Now()})
	eventually(t, "plan and app copies", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM apps WHERE id = $1) + (SELECT count(*) FROM plans WHERE account_id = $2 AND plan = 'flock')`, appID, account).Scan(&n)
		return n == 2
	})
	// A late, older plan event does not overwrite the newer copy.
	publish(events.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: account, Plan: "nestling", Version: 1, Limits: &billingv1.PlanLimits{}})

	id := uuid.Must(uuid.NewV7()).String()
	err = svc.Store().InTx(ctx, func(tx service.Tx) error {
		now := time.Now().UTC()
		return tx.Insert(ctx, &deploy.Deploy{ID: id, AppID: appID, AccountID: account, Kind: deploy.KindStatic, Status: deploy.Building, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	publish(events.KeyDeployProgress, &zonev1.DeployProgress{DeployId: id, AppId: appID, Zone: "eu-1", Step: zonev1.DeployStep_DEPLOY_STEP_READY})
	status := func() string {
		d, err := svc.Store().Deploy(ctx, id)
		if err != nil {
			return err.Error()
		}
		return string(d.Status)
	}
	eventually(t, "the deploy to go live", func() bool { return status() == "live" })
	// The activation command went out to the app's zone, confirmed by the broker.
	eventually(t, "the activate command to be published", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE routing_key = 'zone.eu-1.activate' AND sent_at IS NOT NULL`).Scan(&n)
		return n == 1
	})
	if p, _, _ := store.New(pool).Plan(ctx, account); p.Name != "flock" {
		t.Fatalf("plan %+v", p)
	}

	publish(events.KeyAppDeleted, &appsv1.AppDeleted{AppId: appID, AccountId: account, Slug: "web"})
	eventually(t, "the app to disappear", func() bool {
		_, err := svc.Store().AppBySlug(ctx, account, "web")
		return err == deploy.ErrAppNotFound
	})
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
