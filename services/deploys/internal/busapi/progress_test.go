package busapi_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// A progress report speaks for the zone that published it, whatever zone its body names: a
// zone cannot move another zone's deploys by claiming to be it.
func TestProgressIsFromThePublishingZone(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Log: slog.New(slog.DiscardHandler)})
	appID, account, id := uuid.NewString(), uuid.NewString(), uuid.Must(uuid.NewV7()).String()
	err := svc.Store().InTx(ctx, func(tx usecase.Tx) error {
		now := time.Now().UTC()
		if err := svc.OnAppCreated(ctx, tx, usecase.App{ID: appID, AccountID: account, Slug: "web", Kind: "static", Zone: "eu-1"}, now); err != nil {
			return err
		}
		return tx.Insert(ctx, &deploy.Deploy{ID: id, AppID: appID, AccountID: account, Kind: deploy.KindStatic, Status: deploy.Building, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	var handle bus.TxHandler
	for _, s := range busapi.Subscriptions(svc, store.Bind) {
		if s.Queue == busapi.QueueZoneReports {
			handle = s.Handle
		}
	}
	report := func(publisher string) string {
		body, _ := proto.Marshal(&zonev1.DeployProgress{DeployId: id, AppId: appID, Zone: "eu-1", Step: zonev1.DeployStep_DEPLOY_STEP_FAILED, Error: "build_failed"})
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: zonebus.KeyDeployProgressed, Body: body, Attempt: 1, Publisher: publisher}
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
			t.Fatal(err)
		}
		got, err := svc.Store().Deploy(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return string(got.Status)
	}
	if s := report(bus.ZonePrincipal("other")); s != "building" {
		t.Fatalf("zone other, claiming eu-1, moved the deploy to %s", s)
	}
	if s := report(bus.ZonePrincipal("eu-1")); s != "failed" {
		t.Fatalf("the app's zone: %s", s)
	}
}
