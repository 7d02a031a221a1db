package busapi_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/cron"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// A cron run report speaks for the zone that published it; the app's zone moves the run,
// a repeat or a late report changes nothing, and a report without a status is dropped.
func TestCronProgressFromTheAppsZone(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Log: slog.New(slog.DiscardHandler)})
	crons := svc.Crons(store.New(pool), 0)
	appID, runID := uuid.NewString(), uuid.Must(uuid.NewV7()).String()
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := store.New(pool).InTx(ctx, func(tx usecase.Tx) error {
		return svc.OnAppCreated(ctx, tx, usecase.App{ID: appID, AccountID: uuid.NewString(), Slug: "svc", Kind: "service", Zone: "eu-1"}, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = store.New(pool).CronInTx(ctx, func(tx usecase.CronTx) error {
		job := cron.Job{ID: uuid.NewString(), AppID: appID, Name: "job", Schedule: "@daily", Timezone: "UTC", Command: "x",
			Policy: cron.Forbid, TimeoutSeconds: 60, Enabled: true, CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertCronJob(ctx, job); err != nil {
			return err
		}
		_, err := tx.InsertCronRun(ctx, cron.Run{ID: runID, JobID: job.ID, AppID: appID, Trigger: cron.Manual, ScheduledFor: now,
			Status: cron.Pending, CreatedAt: now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var handle bus.TxHandler
	for _, s := range busapi.CronSubscriptions(crons, store.BindCron) {
		if s.Queue == busapi.QueueCronReports && len(s.Keys) == 1 && s.Keys[0] == zonebus.KeyCronProgressed {
			handle = s.Handle
		}
	}
	report := func(publisher string, status zonev1.CronRunStatus, exit int32) (string, error) {
		body, _ := proto.Marshal(&zonev1.CronRunProgress{RunId: runID, AppId: appID, Zone: "eu-1", Status: status, ExitCode: exit, At: timestamppb.New(now)})
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: zonebus.KeyCronProgressed, Body: body, Attempt: 1, Publisher: publisher}
		err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) })
		var s string
		pool.QueryRow(ctx, `SELECT status FROM cron_runs WHERE id = $1`, runID).Scan(&s)
		return s, err
	}
	if s, err := report(bus.ZonePrincipal("other"), zonev1.CronRunStatus_CRON_RUN_STATUS_SUCCEEDED, 0); err != nil || s != "pending" {
		t.Fatalf("zone other, claiming eu-1: %s %v", s, err)
	}
	if s, err := report(bus.ZonePrincipal("eu-1"), zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING, -1); err != nil || s != "running" {
		t.Fatalf("running: %s %v", s, err)
	}
	if s, err := report(bus.ZonePrincipal("eu-1"), zonev1.CronRunStatus_CRON_RUN_STATUS_TIMED_OUT, -1); err != nil || s != "timed_out" {
		t.Fatalf("timed out: %s %v", s, err)
	}
	if s, err := report(bus.ZonePrincipal("eu-1"), zonev1.CronRunStatus_CRON_RUN_STATUS_SUCCEEDED, 0); err != nil || s != "timed_out" {
		t.Fatalf("a report after the end: %s %v", s, err)
	}
	if _, err := report(bus.ZonePrincipal("eu-1"), zonev1.CronRunStatus_CRON_RUN_STATUS_UNSPECIFIED, 0); !bus.IsPermanent(err) {
		t.Fatalf("no status: %v, want a permanent error", err)
	}
}
