package busapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

func wireRequests(app string, ok int64) *zonev1.AppRequestCounts {
	b := make([]int64, 22)
	b[3] = ok
	return &zonev1.AppRequestCounts{AppId: app, ByStatusClass: []int64{0, ok, 0, 0, 0}, LatencyBuckets: b, LatencySumMillis: float64(ok) * 7}
}

func metricRows(t *testing.T, db *logstest.DB, table, app string) int {
	t.Helper()
	var n int
	must(t, db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE app_id = $1`, app).Scan(&n))
	return n
}

// The entries' rule for reports: a deleted app's rows and those of an app another zone hosts
// are dropped, an app not heard of yet is kept; a malformed row goes alone; a report
// delivered twice (two deliveries, as a relay's republish makes) is kept once.
func TestMetricsIngestRules(t *testing.T) {
	db := logstest.NewDB(t)
	now := time.Now().UTC()
	ingest := busapi.NewMetrics(db.Store, usecase.NewMetricsIngest(db.Store, quiet, func() time.Time { return now }, func() int { return 30 }), quiet)
	apps := busapi.NewApps(db.Store, func() time.Time { return now })
	mine, foreign, deleted, unknown := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: mine, AccountId: testAccount, Slug: "mine", Zone: "local"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: foreign, AccountId: testAccount, Slug: "far", Zone: "us-1"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: deleted, AccountId: testAccount, Slug: "gone"})))

	report := &zonev1.AppMetrics{ReportId: uuid.NewString(), Zone: "local", Minute: timestamppb.New(now.Add(-2 * time.Minute)),
		Requests: []*zonev1.AppRequestCounts{wireRequests(mine, 5), wireRequests(foreign, 5), wireRequests(deleted, 5), wireRequests(unknown, 5),
			{AppId: mine, ByStatusClass: []int64{1, 2}, LatencyBuckets: make([]int64, 22)}, // too few classes
			{AppId: "nope", ByStatusClass: []int64{0, 1, 0, 0, 0}, LatencyBuckets: make([]int64, 22)}},
		Usage: []*zonev1.InstanceUsage{{AppId: mine, Process: "web.1", CpuCores: 0.2, MemoryBytes: 10, MemoryLimitBytes: 100},
			{AppId: mine, Process: "Web 2", CpuCores: 0.2}, {AppId: foreign, Process: "web.1"}}}
	for range 2 { // two deliveries of one report: fresh message ids, the same report_id
		d := delivery(t, zonebus.KeyAppMetrics, report)
		d.Publisher = bus.ZonePrincipal("local")
		must(t, handle(t, db, ingest.Handle, d))
	}
	for _, c := range []struct {
		name, table, app string
		want             int
	}{
		{"own app's counts, once", "metric_requests", mine, 1},
		{"own app's instance, the malformed one dropped", "metric_usage", mine, 1},
		{"another zone's app", "metric_requests", foreign, 0},
		{"another zone's app's instance", "metric_usage", foreign, 0},
		{"deleted app", "metric_requests", deleted, 0},
		{"app not heard of yet: kept", "metric_requests", unknown, 1},
	} {
		if n := metricRows(t, db, c.table, c.app); n != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, n, c.want)
		}
	}
	sums, err := db.Store.RequestSums(context.Background(), mine, now.Add(-time.Hour), now, 3600)
	must(t, err)
	if len(sums) != 1 || sums[0].Index != 1 || sums[0].Sum != 5 {
		t.Fatalf("sums %+v, want five 2xx once", sums)
	}
	// A report without an id or minute breaks the contract as a whole.
	for _, bad := range []*zonev1.AppMetrics{{ReportId: "x", Minute: timestamppb.Now()}, {ReportId: uuid.NewString()}} {
		if err := handle(t, db, ingest.Handle, delivery(t, zonebus.KeyAppMetrics, bad)); !bus.IsPermanent(err) {
			t.Fatalf("report %v: want a permanent error, got %v", bad, err)
		}
	}
	// Older than any retention, or too far ahead: dropped, not failed.
	for _, at := range []time.Time{now.Add(-31 * 24 * time.Hour), now.Add(25 * time.Hour)} {
		r := &zonev1.AppMetrics{ReportId: uuid.NewString(), Minute: timestamppb.New(at), Requests: []*zonev1.AppRequestCounts{wireRequests(unknown, 1)}}
		must(t, handle(t, db, ingest.Handle, delivery(t, zonebus.KeyAppMetrics, r)))
	}
	if n := metricRows(t, db, "metric_requests", unknown); n != 1 {
		t.Fatalf("reports out of the window stored: %d rows", n)
	}
}

func TestMetricsPlanKeepsTheHighestVersion(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	plans := busapi.NewMetricsPlans(db.Store, usecase.NewMetricsPlans(db.Store, nil, quiet), quiet)
	change := func(version, days int64) {
		t.Helper()
		must(t, handle(t, db, plans.Handle, delivery(t, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{
			AccountId: testAccount, Plan: "p", Version: version,
			Limits: &billingv1.PlanLimits{LogRetentionDays: 1, MetricsRetentionDays: days, InstanceMemoryBytes: 1 << 30},
		})))
	}
	change(2, 7)
	change(1, 30) // late and older: ignored
	change(3, 0)  // no metrics retention: nothing to record
	p, ok, err := db.Store.MetricsPlan(ctx, testAccount)
	if err != nil || !ok || p.RetentionDays != 7 || p.InstanceMemoryBytes != 1<<30 || p.Version != 2 {
		t.Fatalf("plan %+v %v %v", p, ok, err)
	}
	change(4, 30)
	if max, _ := db.Store.MaxMetricsRetentionDays(ctx); max != 30 {
		t.Fatalf("longest metrics retention %d", max)
	}
}
