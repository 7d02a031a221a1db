package store_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/metrics"
	"tori.dev/services/logs/internal/store"
	"tori.dev/services/logs/internal/usecase"
)

func requestsOf(app string, counts ...int64) metrics.Requests {
	b := make([]int64, 22)
	var n int64
	for _, c := range counts {
		n += c
	}
	b[4] = n
	return metrics.Requests{AppID: app, Counts: counts, Buckets: b, SumMillis: float64(n) * 15}
}

func saveReport(t *testing.T, db *logstest.DB, r metrics.Report) int64 {
	t.Helper()
	ctx := context.Background()
	if err := db.Store.EnsureMetricPartitions(ctx, []time.Time{r.Minute}); err != nil {
		t.Fatal(err)
	}
	var n int64
	err := db.Store.InMetricsTx(ctx, func(tx usecase.MetricsTx) error {
		var err error
		n, err = tx.SaveReport(ctx, r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A report is kept once per app and instance, however often it arrives; another report of
// the same minute adds to it.
func TestReportStoredOnce(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	app, other := uuid.NewString(), uuid.NewString()
	minute := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute)
	r := metrics.Report{ID: uuid.NewString(), Minute: minute,
		Requests: []metrics.Requests{requestsOf(app, 0, 7, 0, 2, 1), requestsOf(other, 0, 1, 0, 0, 0)},
		Usage: []metrics.Usage{{AppID: app, Instance: "web.1", CPUCores: 0.5, MemBytes: 100, LimitBytes: 1000},
			{AppID: app, Instance: "web.2", CPUCores: 0.25, MemBytes: 200, LimitBytes: 1000}}}
	if n := saveReport(t, db, r); n != 4 {
		t.Fatalf("first delivery stored %d rows, want 4", n)
	}
	if n := saveReport(t, db, r); n != 0 {
		t.Fatalf("second delivery stored %d rows, want 0", n)
	}
	again := r
	again.ID = uuid.NewString()
	again.Requests, again.Usage = again.Requests[:1], nil
	if n := saveReport(t, db, again); n != 1 {
		t.Fatalf("another report of the minute stored %d rows, want 1", n)
	}
	sums, err := db.Store.RequestSums(ctx, app, minute, minute.Add(time.Minute), 60)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]int64{}
	for _, s := range sums {
		if s.T != minute.Unix() {
			t.Fatalf("sum at %d, want the minute %d", s.T, minute.Unix())
		}
		got[s.Index] = s.Sum
	}
	if got[1] != 14 || got[3] != 4 || got[4] != 2 || got[0] != 0 {
		t.Fatalf("sums by class %v", got)
	}
	usage, err := db.Store.InstanceUsage(ctx, app, minute, minute.Add(time.Minute), 60, logs.ProcessFilter{Type: "web", Exact: "web.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != 1 || usage[0].Instance != "web.2" || usage[0].MemBytes != 200 {
		t.Fatalf("usage of web.2: %+v", usage)
	}
}

// The upkeep creates today's and the coming days' partitions of both tables and drops whole
// days past the longest metrics retention (the configured one, raised by a plan on record).
func TestMetricPartitionsCreatedAndDropped(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return logs.Day(now).AddDate(0, 0, d) }
	if err := db.Store.EnsureMetricPartitions(ctx, []time.Time{day(-40), day(-31), day(-30), day(-10)}); err != nil {
		t.Fatal(err)
	}
	// A plan keeping 35 days: only the day 40 days ago is wholly past it.
	db.Store.InMetricsTx(ctx, func(tx usecase.MetricsTx) error {
		return tx.SaveMetricsPlan(ctx, metrics.Plan{AccountID: "acc", RetentionDays: 35, Version: 1})
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	up := usecase.NewMetricsPartitions(db.Store, quiet, func() time.Time { return now }, 2, 30)
	dropped, err := up.Upkeep(ctx)
	if err != nil || dropped != 1 || up.MaxDays() != 35 {
		t.Fatalf("upkeep: dropped %d, max %d, %v", dropped, up.MaxDays(), err)
	}
	days, err := db.Store.MetricPartitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range days {
		got = append(got, d.Format("01-02"))
	}
	if strings.Join(got, " ") != "10-22 10-23 11-12 11-22 11-23 11-24" {
		t.Fatalf("partitions %v", got)
	}
	// Both tables have each day.
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent IN ('metric_requests'::regclass, 'metric_usage'::regclass)`).Scan(&n); err != nil || n != 12 {
		t.Fatalf("%d partitions in all (%v), want 12", n, err)
	}
	// A plan's shorter retention changes nothing: the configured 30 days still hold.
	db.Store.InMetricsTx(ctx, func(tx usecase.MetricsTx) error {
		return tx.SaveMetricsPlan(ctx, metrics.Plan{AccountID: "acc", RetentionDays: 1, Version: 2})
	})
	if dropped, err := up.Upkeep(ctx); err != nil || dropped != 1 || up.MaxDays() != 30 {
		t.Fatalf("second upkeep: dropped %d (want 10-22 alone), max %d, %v", dropped, up.MaxDays(), err)
	}
	if days, _ := db.Store.MetricPartitions(ctx); len(days) != 5 || !days[0].Equal(day(-30)) {
		t.Fatalf("after the second upkeep: %v", days)
	}
}

// The reads go through the (app_id, minute) index of the window's partitions only.
func TestMetricsReadsUseTheIndex(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	app := uuid.NewString()
	now := time.Now().UTC().Truncate(time.Minute)
	// Many apps, as a zone reports them: the app's rows are a small part of each day's.
	others := make([]string, 100)
	for i := range others {
		others[i] = uuid.NewString()
	}
	for i := range 60 {
		r := metrics.Report{ID: uuid.NewString(), Minute: now.Add(-time.Duration(i) * time.Minute),
			Requests: []metrics.Requests{requestsOf(app, 0, 1, 0, 0, 0)},
			Usage:    []metrics.Usage{{AppID: app, Instance: "web.1"}}}
		for _, o := range others {
			r.Requests = append(r.Requests, requestsOf(o, 0, 1, 0, 0, 0))
			r.Usage = append(r.Usage, metrics.Usage{AppID: o, Instance: "web.1"}, metrics.Usage{AppID: o, Instance: "web.2"})
		}
		saveReport(t, db, r)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE metric_requests; ANALYZE metric_usage`); err != nil {
		t.Fatal(err)
	}
	usage, uargs := store.UsageQuery(app, now.Add(-time.Hour), now, 300, logs.ProcessFilter{Type: "web"})
	for name, c := range map[string]struct {
		sql  string
		args []any
	}{
		"requests":  {store.RequestsSQL, []any{app, now.Add(-time.Hour), now, int64(300)}},
		"latency":   {store.LatencySQL, []any{app, now.Add(-time.Hour), now, int64(300)}},
		"usage/web": {usage, uargs},
	} {
		rows, err := db.Pool.Query(ctx, "EXPLAIN "+c.sql, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		rows.Close()
		p := plan.String()
		if strings.Contains(p, "Seq Scan") || !strings.Contains(p, "Index Cond: ((app_id = ") {
			t.Errorf("%s: the plan does not read the index:\n%s", name, p)
		}
	}
}

// A deleted app's cleanup removes its metrics with its lines; other apps keep theirs.
func TestCleanupRemovesAnAppsMetrics(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	app, other := uuid.NewString(), uuid.NewString()
	now := time.Now().UTC().Truncate(time.Minute)
	for _, m := range []time.Time{now.Add(-26 * time.Hour), now} {
		saveReport(t, db, metrics.Report{ID: uuid.NewString(), Minute: m,
			Requests: []metrics.Requests{requestsOf(app, 0, 1, 0, 0, 0), requestsOf(other, 0, 1, 0, 0, 0)},
			Usage:    []metrics.Usage{{AppID: app, Instance: "web.1"}, {AppID: other, Instance: "web.1"}}})
	}
	if _, err := db.Store.DeleteAppEntries(ctx, app, 100); err != nil {
		t.Fatal(err)
	}
	count := func(id string) (n int) {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM metric_requests WHERE app_id = $1) + (SELECT count(*) FROM metric_usage WHERE app_id = $1)`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(app); n != 0 {
		t.Fatalf("%d metrics rows of the deleted app left", n)
	}
	if n := count(other); n != 4 {
		t.Fatalf("the other app has %d rows, want 4", n)
	}
}
