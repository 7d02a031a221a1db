package edgecount_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/edgecount"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// A flush writes one AppMetrics per minute with requests to the zone's outbox, on
// zone.app.metrics, with the counts since the last flush; the next flush writes only what is
// new, under a new report id.
func TestFlushWritesAppMetricsToTheOutbox(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	minute := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	now := minute.Add(30 * time.Second)
	c := &edgecount.Counter{}
	f := &edgecount.Flusher{Counter: c, Zone: storetest.Zone, Publish: busapi.PublishAppMetrics(store.New(pool)),
		Now: func() time.Time { return now }}
	for i := 0; i < 7; i++ {
		c.Observe("app-1", 200, 4*time.Millisecond, minute.Add(time.Second))
	}
	c.Observe("app-1", 404, 40*time.Millisecond, minute.Add(2*time.Second))
	c.Observe("app-2", 502, 2*time.Second, minute.Add(3*time.Second))
	f.Flush(ctx)
	c.Observe("app-1", 200, time.Millisecond, minute.Add(40*time.Second))
	now = minute.Add(45 * time.Second)
	f.Flush(ctx)
	f.Flush(ctx) // nothing new: no report

	reports := outboxReports(t, ctx, pool)
	if len(reports) != 2 {
		t.Fatalf("%d reports in the outbox, want 2", len(reports))
	}
	first, second := reports[0], reports[1]
	if first.GetReportId() == "" || first.GetReportId() == second.GetReportId() {
		t.Fatalf("report ids %q, %q: want two different ones", first.GetReportId(), second.GetReportId())
	}
	if first.GetZone() != storetest.Zone || !first.GetMinute().AsTime().Equal(minute) {
		t.Fatalf("zone %q minute %v", first.GetZone(), first.GetMinute().AsTime())
	}
	byApp := map[string]*zonev1.AppRequestCounts{}
	for _, a := range first.GetRequests() {
		byApp[a.GetAppId()] = a
	}
	a1, a2 := byApp["app-1"], byApp["app-2"]
	if a1 == nil || a2 == nil || len(byApp) != 2 {
		t.Fatalf("first report's apps %v", byApp)
	}
	if got := a1.GetByStatusClass(); got[1] != 7 || got[3] != 1 || got[4] != 0 {
		t.Fatalf("app-1 by class %v, want 7 2xx and 1 4xx", got)
	}
	if got := a2.GetByStatusClass(); got[4] != 1 {
		t.Fatalf("app-2 by class %v, want one 5xx", got)
	}
	if a1.GetLatencySumMillis() != 7*4+40 {
		t.Fatalf("app-1 latency sum %v, want 68", a1.GetLatencySumMillis())
	}
	var n int64
	for _, b := range a1.GetLatencyBuckets() {
		n += b
	}
	if n != 8 {
		t.Fatalf("app-1's histogram holds %d requests, want 8", n)
	}
	if len(second.GetRequests()) != 1 || second.GetRequests()[0].GetAppId() != "app-1" || second.GetRequests()[0].GetByStatusClass()[1] != 1 {
		t.Fatalf("second report %v, want app-1's one new 2xx", second.GetRequests())
	}
}

// A report the outbox could not take is kept, with its id, and written by the next flush
// before the newer one.
func TestFlushKeepsAnUnwrittenReport(t *testing.T) {
	ctx := context.Background()
	minute := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	c := &edgecount.Counter{}
	var written []*zonev1.AppMetrics
	fail := true
	f := &edgecount.Flusher{Counter: c, Zone: "z", Now: func() time.Time { return minute.Add(30 * time.Second) },
		Publish: func(ctx context.Context, m *zonev1.AppMetrics) error {
			if fail {
				return errors.New("database away")
			}
			written = append(written, m)
			return nil
		}}
	c.Observe("app", 200, time.Millisecond, minute)
	f.Flush(ctx)
	fail = false
	c.Observe("app", 200, time.Millisecond, minute)
	f.Flush(ctx)
	if len(written) != 2 || written[0].GetRequests()[0].GetByStatusClass()[1] != 1 || written[1].GetRequests()[0].GetByStatusClass()[1] != 1 {
		t.Fatalf("written %v, want the kept report then the new one", written)
	}
}

// outboxReports are the AppMetrics in the outbox, in the order written.
func outboxReports(t *testing.T, ctx context.Context, pool *pgxpool.Pool) []*zonev1.AppMetrics {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyAppMetrics)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var out []*zonev1.AppMetrics
	for _, b := range bodies {
		m := &zonev1.AppMetrics{}
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
