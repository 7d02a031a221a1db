package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/logstest"
)

// metricsAnswer is the route's answer.
type metricsAnswer struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	Step   int    `json:"step"`
	Series []struct {
		Labels map[string]string `json:"labels"`
		Points [][2]*float64     `json:"points"`
	} `json:"series"`
	Limit *int64 `json:"limit"`
}

func (r *running) getMetrics(t *testing.T, account, slug string, q url.Values) (int, metricsAnswer) {
	t.Helper()
	path := "/api/apps/" + slug + "/metrics?" + q.Encode()
	req, err := http.NewRequest("GET", r.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	callerid.Sign([]byte(r.Env["GATEWAY_SIGNING_KEY"]), req.Header.Set, callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session", TokenID: "t"}, "GET", req.Host, path, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a metricsAnswer
	if res.StatusCode == 200 {
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode, a
}

// edgeReport is one edge's counts for app over minute: requests by status class, each class's
// latencies spread over the buckets from its index up.
func edgeReport(app string, minute time.Time, byClass [5]int64) *zonev1.AppMetrics {
	buckets := make([]int64, 22)
	for c, n := range byClass {
		for i := int64(0); i < n; i++ {
			buckets[(int64(c)*3+i)%22]++
		}
	}
	return &zonev1.AppMetrics{ReportId: uuid.NewString(), Zone: "local", Minute: timestamppb.New(minute),
		Requests: []*zonev1.AppRequestCounts{{AppId: app, ByStatusClass: byClass[:], LatencyBuckets: buckets, LatencySumMillis: 1}}}
}

// Reports published by a zone over the real bus are consumed and read back through the route:
// requests sum to what the edges counted, split by status; latency quantiles are ordered;
// cpu and memory come per instance with their labels, and the process filter picks them.
func TestMetricsFromTheZoneThroughTheRoute(t *testing.T) {
	svc := start(t, nil)
	db, zone := svc.db, svc.pub
	cfg := logstest.BusConfigOf(t, svc.Env)
	billingPub := logstest.NewPublisher(t, svc.Env["DATABASE_URL"], cfg, bus.PrincipalBilling)
	appsPub := logstest.NewPublisher(t, svc.Env["DATABASE_URL"], cfg, bus.PrincipalApps)
	ctx := context.Background()
	app, acc := uuid.NewString(), uuid.NewString()
	appsPub.Publish(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: app, AccountId: acc, Slug: "metered", Kind: "service", Zone: "local", CreatedAt: timestamppb.Now()})

	// The metrics queues are declared as the service starts: publish until one lands.
	probe := uuid.NewString()
	testinfra.Eventually(t, 30*time.Second, "the metrics queue takes reports and the plan copy is kept", func() bool {
		var reports, plans int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM metric_requests WHERE app_id = $1`, probe).Scan(&reports)
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM metric_plans WHERE account_id = $1`, acc).Scan(&plans)
		if reports == 0 {
			zone.Publish(t, zonebus.KeyAppMetrics, edgeReport(probe, time.Now().Truncate(time.Minute), [5]int64{0, 1}))
		}
		if plans == 0 {
			billingPub.Publish(t, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: acc, Plan: "songbird", Version: 1,
				Limits: &billingv1.PlanLimits{LogRetentionDays: 7, MetricsRetentionDays: 7, InstanceMemoryBytes: 512 << 20}})
		}
		return reports > 0 && plans > 0
	})

	// Two edges over three minutes, one of their reports delivered twice (a relay's republish).
	m0 := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Minute)
	counts := []struct {
		minute  time.Time
		byClass [5]int64
	}{
		{m0, [5]int64{0, 40, 2, 5, 1}},
		{m0, [5]int64{0, 30, 0, 0, 0}},
		{m0.Add(time.Minute), [5]int64{0, 25, 0, 3, 2}},
		{m0.Add(2 * time.Minute), [5]int64{1, 60, 0, 0, 4}},
	}
	var want [5]int64
	var n int64
	for _, c := range counts {
		r := edgeReport(app, c.minute, c.byClass)
		zone.Publish(t, zonebus.KeyAppMetrics, r)
		for i, v := range c.byClass {
			want[i] += v
			n += v
		}
		if c.minute.Equal(m0.Add(time.Minute)) {
			// The same report again as a message of its own: kept once by its report_id.
			zone.Publish(t, zonebus.KeyAppMetrics, r)
		}
	}
	zone.Publish(t, zonebus.KeyAppMetrics, &zonev1.AppMetrics{ReportId: uuid.NewString(), Zone: "local", Minute: timestamppb.New(m0.Add(time.Minute)),
		Usage: []*zonev1.InstanceUsage{
			{AppId: app, Process: "web.1", CpuCores: 0.25, MemoryBytes: 100 << 20, MemoryLimitBytes: 512 << 20},
			{AppId: app, Process: "web.2", CpuCores: 0.75, MemoryBytes: 120 << 20, MemoryLimitBytes: 512 << 20},
			{AppId: app, Process: "worker.1", CpuCores: 0.1, MemoryBytes: 60 << 20, MemoryLimitBytes: 512 << 20},
		}})

	window := url.Values{"start": {m0.Add(-time.Minute).Format(time.RFC3339)}}
	var got metricsAnswer
	testinfra.Eventually(t, 20*time.Second, "every request counted", func() bool {
		status, a := svc.getMetrics(t, acc, "metered", window)
		got = a
		var total float64
		for _, s := range a.Series {
			for _, p := range s.Points {
				total += *p[1]
			}
		}
		return status == 200 && total == float64(n)
	})
	for _, s := range got.Series {
		class := -1
		for i, l := range []string{"1xx", "2xx", "3xx", "4xx", "5xx"} {
			if s.Labels["status"] == l {
				class = i
			}
		}
		var sum float64
		for _, p := range s.Points {
			sum += *p[1]
		}
		if class < 0 || sum != float64(want[class]) {
			t.Fatalf("series %v sums to %v, want %v", s.Labels, sum, want)
		}
	}
	if len(got.Series) != 5 || got.Unit != "requests" { // every class was seen at least once
		t.Fatalf("requests answer %+v", got)
	}

	q := url.Values{"metric": {"latency"}}
	q.Set("start", window.Get("start"))
	_, lat := svc.getMetrics(t, acc, "metered", q)
	if len(lat.Series) != 3 || lat.Unit != "ms" {
		t.Fatalf("latency %+v", lat)
	}
	seen := 0
	for i := range lat.Series[0].Points {
		p50, p95, p99 := lat.Series[0].Points[i][1], lat.Series[1].Points[i][1], lat.Series[2].Points[i][1]
		if p50 == nil {
			if p95 != nil || p99 != nil {
				t.Fatalf("point %d: p50 null but not the others", i)
			}
			continue
		}
		seen++
		if !(*p50 <= *p95 && *p95 <= *p99) {
			t.Fatalf("point %d: p50 %v p95 %v p99 %v", i, *p50, *p95, *p99)
		}
	}
	if seen != 3 {
		t.Fatalf("%d minutes with a latency, want 3", seen)
	}

	usage := func(metric, process string) metricsAnswer {
		t.Helper()
		q := url.Values{"metric": {metric}, "start": {window.Get("start")}}
		if process != "" {
			q.Set("process", process)
		}
		status, a := svc.getMetrics(t, acc, "metered", q)
		if status != 200 {
			t.Fatalf("%s process=%s: %d", metric, process, status)
		}
		return a
	}
	var cpu metricsAnswer
	testinfra.Eventually(t, 20*time.Second, "the usage stored", func() bool { cpu = usage("cpu", ""); return len(cpu.Series) == 3 })
	for i, want := range []map[string]string{{"process": "web", "instance": "web.1"}, {"process": "web", "instance": "web.2"}, {"process": "worker", "instance": "worker.1"}} {
		if l := cpu.Series[i].Labels; l["process"] != want["process"] || l["instance"] != want["instance"] || len(l) != 2 {
			t.Fatalf("cpu series %d labels %v, want %v", i, l, want)
		}
	}
	// Every report published before the usage one has been handled by now: the duplicate
	// still counted once.
	if _, again := svc.getMetrics(t, acc, "metered", window); len(again.Series) != len(got.Series) {
		t.Fatalf("requests changed: %+v", again)
	} else {
		for i, s := range again.Series {
			for j, p := range s.Points {
				if *p[1] != *got.Series[i].Points[j][1] {
					t.Fatalf("%v at %v: %v, then %v", s.Labels, *p[0], *got.Series[i].Points[j][1], *p[1])
				}
			}
		}
	}
	if web := usage("cpu", "web"); len(web.Series) != 2 {
		t.Fatalf("process=web: %d series", len(web.Series))
	}
	mem := usage("memory", "web.2")
	if len(mem.Series) != 1 || mem.Series[0].Labels["instance"] != "web.2" || mem.Limit == nil || *mem.Limit != 512<<20 {
		t.Fatalf("memory of web.2: %+v", mem)
	}
	var peak float64
	for _, p := range mem.Series[0].Points {
		if p[1] != nil {
			peak = max(peak, *p[1])
		}
	}
	if peak != 120<<20 {
		t.Fatalf("web.2's memory %v", peak)
	}
	inst := usage("instances", "")
	if len(inst.Series) != 2 || inst.Series[0].Labels["process"] != "web" {
		t.Fatalf("instances %+v", inst)
	}
	for _, p := range inst.Series[0].Points {
		if p[1] != nil && *p[1] != 2 {
			t.Fatalf("web instances %v", *p[1])
		}
	}
	if status, _ := svc.getMetrics(t, uuid.NewString(), "metered", nil); status != 404 {
		t.Fatalf("another team reads the metrics: %d", status)
	}
}
