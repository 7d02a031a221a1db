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
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// handlerFor is the consumer of queue, to be handed deliveries directly.
func handlerFor(t *testing.T, svc *usecase.Service, queue string) bus.TxHandler {
	t.Helper()
	for _, s := range busapi.Subscriptions(svc, store.Bind) {
		if s.Queue == queue {
			return s.Handle
		}
	}
	t.Fatalf("no consumer of %s", queue)
	return nil
}

// The zone's FormationStatus sets `running` per type of the deploy the formation follows:
// only from the app's own zone, only about that deploy, and never from a report older than
// the one kept; a type the report leaves out runs none.
func TestFormationStatusSetsRunning(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Log: slog.New(slog.DiscardHandler)})
	appID, account, id := uuid.NewString(), uuid.NewString(), uuid.Must(uuid.NewV7()).String()
	err := svc.Store().InTx(ctx, func(tx usecase.Tx) error {
		now := time.Now().UTC()
		if err := svc.OnAppCreated(ctx, tx, usecase.App{ID: appID, AccountID: account, Slug: "svc", Kind: "service", Zone: "eu-1"}, now); err != nil {
			return err
		}
		if err := tx.Insert(ctx, &deploy.Deploy{ID: id, AppID: appID, AccountID: account, Kind: deploy.KindImage, Image: "x", Status: deploy.Releasing, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		// READY with two types: the activation makes the formation web=1 worker=0.
		return svc.OnProgress(ctx, tx, &zonev1.DeployProgress{DeployId: id, AppId: appID, Zone: "eu-1", Step: zonev1.DeployStep_DEPLOY_STEP_READY,
			Processes: []*zonev1.ProcessType{{Name: "web", Command: "serve"}, {Name: "worker", Command: "work"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	handle := handlerFor(t, svc, busapi.QueueFormations)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	report := func(publisher, deployID string, at time.Time, running ...int64) string {
		t.Helper()
		m := &zonev1.FormationStatus{AppId: appID, Zone: "eu-1", DeployId: deployID, At: timestamppb.New(at)}
		for i, typ := range []string{"web", "worker"} {
			if i < len(running) {
				m.Processes = append(m.Processes, &zonev1.ProcessRunning{Type: typ, Running: running[i]})
			}
		}
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: zonebus.KeyFormationChanged, Body: body, Attempt: 1, Publisher: publisher}
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
			t.Fatal(err)
		}
		f, err := svc.Store().Formation(ctx, appID)
		if err != nil {
			t.Fatal(err)
		}
		var out string
		for _, e := range f {
			out += e.Type + "=" + string(rune('0'+e.Running)) + " "
		}
		return out
	}
	zone := bus.ZonePrincipal("eu-1")
	for _, tc := range []struct {
		name      string
		publisher string
		deployID  string
		at        time.Time
		running   []int64
		want      string
	}{
		{"another zone claiming eu-1", bus.ZonePrincipal("other"), id, t0, []int64{1, 1}, "web=0 worker=0 "},
		{"not a zone", bus.PrincipalDeploys, id, t0, []int64{1, 1}, "web=0 worker=0 "},
		{"another deploy", zone, uuid.NewString(), t0, []int64{1, 1}, "web=0 worker=0 "},
		{"the app's zone", zone, id, t0, []int64{1, 2}, "web=1 worker=2 "},
		{"an older report", zone, id, t0.Add(-time.Second), []int64{0, 0}, "web=1 worker=2 "},
		{"a newer one leaving worker out", zone, id, t0.Add(time.Second), []int64{1}, "web=1 worker=0 "},
	} {
		if got := report(tc.publisher, tc.deployID, tc.at, tc.running...); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A plan event's process, cron and preview limits are kept with the rest of the plan.
func TestPlanEventKeepsProcessLimits(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	objs, _ := objects.NewLocal(filepath.Join(t.TempDir(), "objects"))
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Log: slog.New(slog.DiscardHandler)})
	account := uuid.NewString()
	body, _ := proto.Marshal(&billingv1.AccountPlanChanged{AccountId: account, Plan: "flock", Version: 2, Limits: &billingv1.PlanLimits{
		ConcurrentDeploys: 5, UploadBytes: 1 << 30, BuildMinutes: 45, MinScale: 1, Cpu: 2,
		ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40, CronJobs: 50, CronMinIntervalMinutes: 1,
		CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1 << 30, Previews: 20, PreviewMaxTtlHours: 720}})
	d := bus.Delivery{ID: uuid.NewString(), RoutingKey: billingbus.KeyPlanChanged, Body: body, Attempt: 1, Publisher: bus.PrincipalBilling}
	handle := handlerFor(t, svc, busapi.QueuePlans)
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return handle(ctx, bus.TxOf(tx), d) }); err != nil {
		t.Fatal(err)
	}
	p, ok, err := svc.Store().Plan(ctx, account)
	want := usecase.Plan{Name: "flock", ConcurrentDeploys: 5, UploadBytes: 1 << 30, BuildMinutes: 45, MinScale: 1, CPU: 2, Version: 2,
		ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40, CronJobs: 50, CronMinIntervalMinutes: 1,
		CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1 << 30, Previews: 20, PreviewMaxTTLHours: 720}
	if err != nil || !ok || p != want {
		t.Fatalf("plan copy %+v %v %v, want %+v", p, ok, err, want)
	}
}
