package metrics

import (
	"encoding/json"
	"testing"
	"time"
)

var grid = Grid{First: time.Unix(6000, 0).UTC(), Step: 60, N: 3}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRequestSeriesOnePerClassSeenZeroElsewhere(t *testing.T) {
	got := RequestSeries(grid, []StepSum{{6000, 1, 5}, {6120, 1, 2}, {6060, 4, 1}, {6060, 0, 0}, {9999, 1, 7}})
	want := `[{"labels":{"status":"2xx"},"points":[[6000,5],[6060,0],[6120,2]]},{"labels":{"status":"5xx"},"points":[[6000,0],[6060,1],[6120,0]]}]`
	if g := js(t, got); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
	if g := js(t, RequestSeries(grid, nil)); g != `[]` {
		t.Fatalf("no requests: %s", g)
	}
}

func TestLatencySeriesNullWithoutRequests(t *testing.T) {
	got := LatencySeries(grid, []StepSum{{6060, 4, 10}})
	want := `[{"labels":{"quantile":"0.5"},"points":[[6000,null],[6060,15],[6120,null]]},` +
		`{"labels":{"quantile":"0.95"},"points":[[6000,null],[6060,19.5],[6120,null]]},` +
		`{"labels":{"quantile":"0.99"},"points":[[6000,null],[6060,19.9],[6120,null]]}]`
	if g := js(t, got); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
}

func TestUsageSeries(t *testing.T) {
	rows := []StepUsage{
		{T: 6000, Instance: "web.10", CPUCores: 0.5, MemBytes: 100, LimitBytes: 1000},
		{T: 6000, Instance: "web.2", CPUCores: 0.25, MemBytes: 200, LimitBytes: 1000},
		{T: 6060, Instance: "web.2", CPUCores: 1, MemBytes: 300, LimitBytes: 2000},
		{T: 6060, Instance: "worker.1", CPUCores: 0, MemBytes: 50, LimitBytes: 1000},
	}
	cpu := `[{"labels":{"instance":"web.2","process":"web"},"points":[[6000,0.25],[6060,1],[6120,null]]},` +
		`{"labels":{"instance":"web.10","process":"web"},"points":[[6000,0.5],[6060,null],[6120,null]]},` +
		`{"labels":{"instance":"worker.1","process":"worker"},"points":[[6000,null],[6060,0],[6120,null]]}]`
	if g := js(t, UsageSeries("cpu", grid, rows)); g != cpu {
		t.Fatalf("cpu\ngot  %s\nwant %s", g, cpu)
	}
	mem := `[{"labels":{"instance":"web.2","process":"web"},"points":[[6000,200],[6060,300],[6120,null]]},`
	if g := js(t, UsageSeries("memory", grid, rows)); g[:len(mem)] != mem {
		t.Fatalf("memory %s", g)
	}
	inst := `[{"labels":{"process":"web"},"points":[[6000,2],[6060,1],[6120,null]]},` +
		`{"labels":{"process":"worker"},"points":[[6000,0],[6060,1],[6120,null]]}]`
	if g := js(t, UsageSeries("instances", grid, rows)); g != inst {
		t.Fatalf("instances\ngot  %s\nwant %s", g, inst)
	}
	if l := MemoryLimit(Plan{InstanceMemoryBytes: 512}, rows); l == nil || *l != 512 {
		t.Fatalf("plan's limit %v", l)
	}
	if l := MemoryLimit(Plan{}, rows); l == nil || *l != 2000 {
		t.Fatalf("sampled limit %v", l)
	}
	if l := MemoryLimit(Plan{}, nil); l != nil {
		t.Fatalf("no limit known: %v", *l)
	}
}
