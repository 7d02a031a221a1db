package instancemetrics_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/instancemetrics"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// fakeLeaf writes a v2 leaf's files as the kernel would.
func fakeLeaf(t *testing.T, dir string, usageUsec, memory int64, max string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for name, body := range map[string]string{
		"cpu.stat":       "usage_usec " + itoa(usageUsec) + "\nuser_usec 0\nsystem_usec 0\n",
		"memory.current": itoa(memory) + "\n",
		"memory.max":     max + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Each sample reports every running instance under its process name: CPU as cores over the
// window (since the instance started at its first sample, since the previous one after),
// memory now and its limit; an unreadable instance is left out; the report lands in the
// zone's outbox on zone.app.metrics.
func TestSamplesCgroupsIntoTheOutbox(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	root := t.TempDir()
	g := &sandbox.Cgroups{V2: true, Root: root}
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	now := start.Add(30 * time.Second)
	// web.1 used 15 s of CPU in its first 30 s (half a core); worker.1 none yet.
	fakeLeaf(t, g.LeafDir("", "app-1", "web.1"), 15_000_000, 50<<20, "268435456")
	fakeLeaf(t, g.LeafDir("", "app-1", "worker.1"), 0, 8<<20, "max")
	instances := []instancemetrics.Instance{
		{AppID: "app-1", Process: "web.1", Key: "k-web", Started: start, Read: func() (sandbox.Usage, error) { return g.LeafUsage("app-1", "web.1") }},
		{AppID: "app-1", Process: "worker.1", Key: "k-worker", Started: start, Read: func() (sandbox.Usage, error) { return g.LeafUsage("app-1", "worker.1") }},
		{AppID: "app-2", Process: "web.1", Key: "k-gone", Started: start, Read: func() (sandbox.Usage, error) { return sandbox.Usage{}, errors.New("ended") }},
	}
	s := &instancemetrics.Sampler{Zone: storetest.Zone, Instances: func() []instancemetrics.Instance { return instances },
		Publish: busapi.PublishAppMetrics(store.New(pool)), Now: func() time.Time { return now }}
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	// A minute later web.1 has used 60 s more: one core over the window.
	now = now.Add(time.Minute)
	fakeLeaf(t, g.LeafDir("", "app-1", "web.1"), 75_000_000, 60<<20, "268435456")
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}

	rows, err := pool.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyAppMetrics)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d reports, want 2", len(bodies))
	}
	var reports []*zonev1.AppMetrics
	for _, b := range bodies {
		m := &zonev1.AppMetrics{}
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, m)
	}
	first, second := reports[0], reports[1]
	if first.GetReportId() == "" || first.GetReportId() == second.GetReportId() || first.GetZone() != storetest.Zone {
		t.Fatalf("report ids %q %q zone %q", first.GetReportId(), second.GetReportId(), first.GetZone())
	}
	if !first.GetMinute().AsTime().Equal(start) || !second.GetMinute().AsTime().Equal(start.Add(time.Minute)) {
		t.Fatalf("minutes %v, %v", first.GetMinute().AsTime(), second.GetMinute().AsTime())
	}
	byProcess := func(m *zonev1.AppMetrics) map[string]*zonev1.InstanceUsage {
		out := map[string]*zonev1.InstanceUsage{}
		for _, u := range m.GetUsage() {
			if u.GetAppId() != "app-1" {
				t.Fatalf("an unreadable instance was reported: %v", u)
			}
			out[u.GetProcess()] = u
		}
		return out
	}
	f, sec := byProcess(first), byProcess(second)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if w := f["web.1"]; w == nil || !near(w.GetCpuCores(), 0.5) || w.GetMemoryBytes() != 50<<20 || w.GetMemoryLimitBytes() != 256<<20 {
		t.Fatalf("first web.1 %v, want 0.5 cores, 50 MiB of 256 MiB", w)
	}
	if w := f["worker.1"]; w == nil || w.GetCpuCores() != 0 || w.GetMemoryBytes() != 8<<20 || w.GetMemoryLimitBytes() != 0 {
		t.Fatalf("first worker.1 %v, want 0 cores, 8 MiB, no limit", w)
	}
	if w := sec["web.1"]; w == nil || !near(w.GetCpuCores(), 1) || w.GetMemoryBytes() != 60<<20 {
		t.Fatalf("second web.1 %v, want 1 core over the minute, 60 MiB", w)
	}
}

// Nothing running: nothing published.
func TestNoInstancesNoReport(t *testing.T) {
	published := 0
	s := &instancemetrics.Sampler{Zone: "z", Instances: func() []instancemetrics.Instance { return nil },
		Publish: func(context.Context, *zonev1.AppMetrics) error { published++; return nil }}
	if err := s.Sample(context.Background()); err != nil || published != 0 {
		t.Fatalf("published %d, %v", published, err)
	}
}
