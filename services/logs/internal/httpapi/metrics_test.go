package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/metrics"
	"tori.dev/services/logs/internal/usecase"
)

// metricsBilling answers billing's plan question as billing does for an account it has not
// recorded (nestling: a day of metrics, 256 MiB instances); billingDown gets no answer.
type metricsBilling struct{}

func (metricsBilling) Request(_ context.Context, queue string, req, reply proto.Message) error {
	if queue != billingbus.QueueAccountPlan || req.(*billingv1.AccountPlanRequest).GetAccountId() == billingDown {
		return bus.ErrNoResponder
	}
	r := reply.(*billingv1.AccountPlanReply)
	r.Plan, r.Version = "nestling", 0
	r.Limits = &billingv1.PlanLimits{LogRetentionDays: 1, MetricsRetentionDays: 1, InstanceMemoryBytes: 256 << 20}
	return nil
}

// newMetricsEnv serves the metrics route (and the logs route) at testNow.
func newMetricsEnv(t *testing.T) *env {
	t.Helper()
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	billing := busapi.BillingPlans{Client: billingbus.PlanClient{Bus: metricsBilling{}, Timeout: time.Second}}
	clock := func() time.Time { return testNow }
	web := httpapi.New(httpapi.Deps{
		Reader:     usecase.NewReader(db.Store, db.Store, usecase.NewPlans(db.Store, billing, quiet), clock),
		Metrics:    usecase.NewMetricsReader(db.Store, db.Store, usecase.NewMetricsPlans(db.Store, billing, quiet), clock),
		SigningKey: signingKey,
		Apps:       usecase.NewAppFinder(db.Store, nil, quiet),
		DB:         db.Pool,
		Identity:   health.NewIdentity("logs", "test"),
		Log:        quiet,
	})
	return &env{db: db, app: web}
}

func (e *env) metrics(t *testing.T, account, slug string, params url.Values) response {
	t.Helper()
	target := "/api/apps/" + slug + "/metrics"
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	req := httptest.NewRequest("GET", target, nil)
	callerid.Sign(signingKey, req.Header.Set, callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession, TokenID: "tok"}, "GET", req.Host, target, time.Now())
	return e.do(t, req)
}

// seedMetrics stores one report of appID at minute: 3 × 2xx and 1 × 5xx in (10, 20] ms, and
// web.1 and worker.1 sampled.
func (e *env) seedMetrics(t *testing.T, appID string, minute time.Time) {
	t.Helper()
	ctx := context.Background()
	b := make([]int64, 22)
	b[4] = 4
	r := metrics.Report{ID: uuid.NewString(), Minute: minute,
		Requests: []metrics.Requests{{AppID: appID, Counts: []int64{0, 3, 0, 0, 1}, Buckets: b, SumMillis: 60}},
		Usage: []metrics.Usage{{AppID: appID, Instance: "web.1", CPUCores: 0.5, MemBytes: 100 << 20, LimitBytes: 512 << 20},
			{AppID: appID, Instance: "worker.1", CPUCores: 0.1, MemBytes: 50 << 20, LimitBytes: 512 << 20}}}
	if err := e.db.Store.EnsureMetricPartitions(ctx, []time.Time{minute}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Store.InMetricsTx(ctx, func(tx usecase.MetricsTx) error { _, err := tx.SaveReport(ctx, r); return err }); err != nil {
		t.Fatal(err)
	}
}

func TestMetricsAnswers(t *testing.T) {
	e := newMetricsEnv(t)
	acc := uuid.NewString()
	app := e.newApp(t, acc, "web")
	e.seedMetrics(t, app.ID, testNow.Add(-10*time.Minute))
	start := testNow.Add(-30 * time.Minute)
	for _, c := range []struct {
		params url.Values
		unit   string
		series string
	}{
		{url.Values{}, "requests", `[{"labels":{"status":"2xx"}`},
		{url.Values{"metric": {"latency"}, "step": {"300"}}, "ms", `[{"labels":{"quantile":"0.5"},"points":[[`},
		{url.Values{"metric": {"cpu"}, "process": {"worker"}}, "cores", `[{"labels":{"instance":"worker.1","process":"worker"}`},
		{url.Values{"metric": {"memory"}, "process": {"web.1"}}, "bytes", `[{"labels":{"instance":"web.1","process":"web"}`},
		{url.Values{"metric": {"instances"}, "start": {rfc(start)}, "step": {"3600"}}, "instances", `[{"labels":{"process":"web"},"points":[[1795345200,1]]},{"labels":{"process":"worker"},"points":[[1795345200,1]]}]`},
	} {
		r := e.metrics(t, acc, "web", c.params)
		series, _ := json.Marshal(r.Body["series"])
		if r.Status != 200 || r.Body["unit"] != c.unit || !strings.HasPrefix(string(series), c.series) {
			t.Fatalf("%v: %d %s", c.params, r.Status, r.Raw)
		}
		_, hasLimit := r.Body["limit"]
		if hasLimit != (r.Body["metric"] == "memory") {
			t.Fatalf("%v: limit present %v: %s", c.params, hasLimit, r.Raw)
		}
	}
	// The default: an hour of minutes up to now, the 2xx and 5xx series, 0 elsewhere.
	r := e.metrics(t, acc, "web", nil)
	series := r.Body["series"].([]any)
	if len(series) != 2 || r.Body["start"] != "2026-11-22T11:00:00.000Z" || r.Body["end"] != "2026-11-22T12:00:00.000Z" || r.Body["step"] != 60.0 {
		t.Fatalf("default window: %s", r.Raw)
	}
	var sum2xx, sum5xx float64
	for i, s := range series {
		pts := s.(map[string]any)["points"].([]any)
		if len(pts) != 60 {
			t.Fatalf("%d points, want 60", len(pts))
		}
		for _, p := range pts {
			v := p.([]any)[1].(float64)
			if i == 0 {
				sum2xx += v
			} else {
				sum5xx += v
			}
		}
	}
	if sum2xx != 3 || sum5xx != 1 {
		t.Fatalf("2xx %v, 5xx %v", sum2xx, sum5xx)
	}
	// Memory's limit is the plan's (billing's answer, kept as the copy).
	r = e.metrics(t, acc, "web", url.Values{"metric": {"memory"}})
	if r.Body["limit"] != float64(256<<20) {
		t.Fatalf("memory limit: %s", r.Raw)
	}
}

// Every refusal, in the route's order: the app (404 whatever the query), the parameters (400,
// the message starting with the parameter), the retention (410), and the plan unknown (503).
func TestMetricsRefusals(t *testing.T) {
	e := newMetricsEnv(t)
	acc := uuid.NewString()
	e.newApp(t, acc, "web")
	gone := e.newApp(t, acc, "gone")
	e.db.MarkAppDeleted(t, gone, testNow)
	e.newApp(t, billingDown, "unbilled")

	for _, c := range []struct {
		name, account, slug string
		params              url.Values
		status              int
		code, message       string
	}{
		{"another team's app", uuid.NewString(), "web", nil, 404, "", ""},
		{"unknown app, bad parameters", acc, "nope", url.Values{"metric": {"disk"}}, 404, "", ""},
		{"deleted app", acc, "gone", nil, 404, "", ""},
		{"unknown metric", acc, "web", url.Values{"metric": {"disk"}}, 400, "invalid_parameter", "metric: "},
		{"bad start", acc, "web", url.Values{"start": {"an hour ago"}}, 400, "invalid_parameter", "start: "},
		{"bad end", acc, "web", url.Values{"end": {"1795183200"}}, 400, "invalid_parameter", "end: "},
		{"end before start", acc, "web", url.Values{"start": {rfc(testNow)}, "end": {rfc(testNow.Add(-time.Minute))}}, 400, "invalid_parameter", "end: "},
		{"span over 31 days", acc, "web", url.Values{"start": {rfc(testNow.Add(-32 * 24 * time.Hour))}, "step": {"3600"}}, 400, "invalid_parameter", "end: "},
		{"step not offered", acc, "web", url.Values{"step": {"30"}}, 400, "invalid_parameter", "step: "},
		{"too many steps", acc, "web", url.Values{"start": {rfc(testNow.Add(-48 * time.Hour))}}, 400, "invalid_parameter", "step: "},
		{"bad process", acc, "web", url.Values{"metric": {"cpu"}, "process": {"web..1"}}, 400, "invalid_parameter", "process: "},
		{"process on requests", acc, "web", url.Values{"process": {"web"}}, 400, "invalid_parameter", "process: "},
		{"beyond retention", acc, "web", url.Values{"start": {rfc(testNow.Add(-25 * time.Hour))}, "step": {"300"}}, 410, "beyond_retention", "start is older than the plan's metrics retention"},
		{"plan unknown, billing down", billingDown, "unbilled", nil, 503, "service_unavailable", ""},
	} {
		r := e.metrics(t, c.account, c.slug, c.params)
		if r.Status != c.status {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Raw)
		}
		if c.code != "" && (r.Body["code"] != c.code || r.Body["error"] != c.code) {
			t.Fatalf("%s: %s", c.name, r.Raw)
		}
		if msg, _ := r.Body["message"].(string); !strings.HasPrefix(msg, c.message) {
			t.Fatalf("%s: message %q, want it to start with %q", c.name, msg, c.message)
		}
	}
	// A defaulted start near the retention's edge is clamped, not refused.
	r := e.metrics(t, acc, "web", url.Values{"end": {rfc(testNow.Add(-24*time.Hour + 10*time.Minute))}})
	if r.Status != 200 || r.Body["start"] != "2026-11-21T12:00:00.000Z" {
		t.Fatalf("defaulted start near the edge: %d %s", r.Status, r.Raw)
	}
}

// The metrics route is gated like the others, and described in the fragment with exactly the
// fields it answers.
func TestMetricsRouteGatedAndDocumented(t *testing.T) {
	e := newMetricsEnv(t)
	bad, checked := accessgate.Ungated(e.app)
	if len(bad) > 0 || checked != 4 { // /logs and /metrics, GET and HEAD
		t.Fatalf("ungated %v, %d walked", bad, checked)
	}
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc fragment
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Paths["/api/apps/{slug}/metrics"]["get"]; !ok {
		t.Fatal("the metrics route is not in the fragment")
	}
	schema := doc.Components.Schemas["Metrics"]
	acc := uuid.NewString()
	e.newApp(t, acc, "web")
	r := e.metrics(t, acc, "web", url.Values{"metric": {"memory"}})
	sameKeys(t, "Metrics", keys(schema.Properties), r.Body)
	r = e.metrics(t, acc, "web", url.Values{"metric": {"cpu"}})
	sameKeys(t, "Metrics", schema.Required, r.Body)
}
