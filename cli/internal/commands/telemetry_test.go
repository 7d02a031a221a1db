package commands

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/cli/internal/api"
)

// telemetryAPI answers the drain and metrics routes of app "api" as the logs service
// documents them, and records each request.
type telemetryAPI struct {
	mu    sync.Mutex
	calls []string
}

const drainJSON = `{"id":"0193d000-0000-7000-8000-00000000000a","url":"https://collector.example.com/ingest?token=***","kind":"https",` +
	`"status":"active","createdAt":"2026-11-29T09:00:00Z","lastDeliveryAt":"2026-11-29T10:00:00Z","lastError":null,"dropped24h":0,"delivered24h":5120}`

func (f *telemetryAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.Method + " " + r.URL.Path {
	case "GET /api/apps/api/drains":
		fmt.Fprint(w, `[`+drainJSON+`,{"id":"d2","url":"syslog+tls://logs.example.com:6514","kind":"syslog","status":"failing",`+
			`"createdAt":"2026-11-29T09:00:00Z","lastDeliveryAt":null,"lastError":"connection refused","dropped24h":312,"delivered24h":0}]`)
	case "GET /api/apps/quiet/drains":
		fmt.Fprint(w, `[]`)
	case "POST /api/apps/api/drains":
		if strings.Contains(string(body), "10.0.0.5") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"drain_address_forbidden","code":"drain_address_forbidden","message":"url: 10.0.0.5 is a private address"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		if strings.Contains(string(body), "syslog") {
			fmt.Fprint(w, strings.Replace(drainJSON, `"kind":"https"`, `"kind":"syslog"`, 1))
			return
		}
		fmt.Fprint(w, strings.TrimSuffix(drainJSON, "}")+`,"secret":"5e3f9a0c1b2d4e6f8a7b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f"}`)
	case "DELETE /api/apps/api/drains/d2":
		w.WriteHeader(http.StatusNoContent)
	case "POST /api/apps/api/drains/d2/test":
		fmt.Fprint(w, `{"delivered":false,"error":"connection refused"}`)
	case "POST /api/apps/api/drains/0193d000-0000-7000-8000-00000000000a/test":
		fmt.Fprint(w, `{"delivered":true,"status":204}`)
	case "GET /api/apps/api/metrics":
		q := r.URL.Query()
		switch q.Get("metric") {
		case "requests":
			fmt.Fprint(w, `{"metric":"requests","unit":"requests","step":60,"start":"2026-11-29T10:00:00Z","end":"2026-11-29T10:05:00Z","series":[`+
				`{"labels":{"status":"2xx"},"points":[[1796032800,0],[1796032860,10],[1796032920,70],[1796032980,35],[1796033040,5]]},`+
				`{"labels":{"status":"5xx"},"points":[[1796032800,0],[1796032860,0],[1796032920,2],[1796032980,0],[1796033040,0]]}]}`)
		case "latency":
			fmt.Fprint(w, `{"metric":"latency","unit":"ms","step":300,"start":"2026-11-29T10:00:00Z","end":"2026-11-29T10:15:00Z","series":[`+
				`{"labels":{"quantile":"0.5"},"points":[[1796032800,4.2],[1796033100,null],[1796033400,3.9]]},`+
				`{"labels":{"quantile":"0.99"},"points":[[1796032800,180],[1796033100,null],[1796033400,95]]}]}`)
		case "memory":
			fmt.Fprint(w, `{"metric":"memory","unit":"bytes","step":60,"start":"2026-11-29T10:00:00Z","end":"2026-11-29T10:02:00Z","limit":268435456,"series":[`+
				`{"labels":{"process":"web","instance":"web.1"},"points":[[1796032800,52428800],[1796032860,62914560]]}]}`)
		case "cpu":
			fmt.Fprint(w, `{"metric":"cpu","unit":"cores","step":60,"start":"2026-11-29T10:00:00Z","end":"2026-11-29T10:01:00Z","series":[]}`)
		default:
			w.WriteHeader(http.StatusGone)
			fmt.Fprint(w, `{"error":"beyond_retention","code":"beyond_retention","message":"start: the nestling plan keeps metrics 1 day"}`)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"not found"}`)
	}
}

func (f *telemetryAPI) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func TestDrainsAndMetricsAgainstTheAPI(t *testing.T) {
	fake := &telemetryAPI{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	const secret = "5e3f9a0c1b2d4e6f8a7b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f"
	cases := []struct {
		name  string
		args  []string
		code  int
		calls []string // nil: none; the metrics cases check their query below
		out   []string
		err   string
	}{
		{"drains", []string{"drains", "-a", "api"}, 0, []string{"GET /api/apps/api/drains"}, []string{
			"ID KIND STATUS URL DELIVERED 24H DROPPED 24H LAST DELIVERY LAST ERROR",
			"0193d000-0000-7000-8000-00000000000a https active https://collector.example.com/ingest?token=*** 5120 0 2026-11-29T10:00:00Z -",
			"d2 syslog failing syslog+tls://logs.example.com:6514 0 312 - connection refused",
		}, ""},
		{"no drains", []string{"drains", "ls", "-a", "quiet"}, 0, []string{"GET /api/apps/quiet/drains"}, []string{"No drains. Add one with tori drains add https://…."}, ""},
		// The secret alone on its stdout line, once; the warning on stderr.
		{"add https", []string{"drains", "add", "https://collector.example.com/ingest?token=abc", "-a", "api"}, 0,
			[]string{`POST /api/apps/api/drains {"url":"https://collector.example.com/ingest?token=abc"}`}, []string{
				"Added drain 0193d000-0000-7000-8000-00000000000a (https) to https://collector.example.com/ingest?token=***.",
				secret,
			}, "the signing secret is shown this once"},
		{"add syslog", []string{"drains", "add", "syslog+tls://logs.example.com:6514", "-a", "api"}, 0,
			[]string{`POST /api/apps/api/drains {"url":"syslog+tls://logs.example.com:6514"}`}, []string{
				"Added drain 0193d000-0000-7000-8000-00000000000a (syslog) to https://collector.example.com/ingest?token=***.",
			}, ""},
		{"add http", []string{"drains", "add", "http://collector.example.com/", "-a", "api"}, 2, nil, []string{""}, "drains send over TLS only"},
		{"add not a URL", []string{"drains", "add", "collector", "-a", "api"}, 2, nil, []string{""}, `"collector" is not a drain URL`},
		{"add ftp", []string{"drains", "add", "ftp://collector.example.com/", "-a", "api"}, 2, nil, []string{""}, "want an https:// or syslog+tls:// URL"},
		{"add a private address", []string{"drains", "add", "https://10.0.0.5/in", "-a", "api"}, 1, []string{`POST /api/apps/api/drains {"url":"https://10.0.0.5/in"}`},
			[]string{""}, `app "api": drain_address_forbidden: url: 10.0.0.5 is a private address`},
		{"test delivered", []string{"drains", "test", "0193d000-0000-7000-8000-00000000000a", "-a", "api"}, 0,
			[]string{"POST /api/apps/api/drains/0193d000-0000-7000-8000-00000000000a/test"}, []string{"Delivered: the receiver answered 204."}, ""},
		{"test not delivered", []string{"drains", "test", "d2", "-a", "api"}, 1, []string{"POST /api/apps/api/drains/d2/test"}, []string{""},
			"not delivered to drain d2: connection refused"},
		{"rm", []string{"drains", "rm", "d2", "--yes", "-a", "api"}, 0, []string{"DELETE /api/apps/api/drains/d2"}, []string{"Removed drain d2."}, ""},
		{"rm asks first", []string{"drains", "rm", "d2", "-a", "api"}, 1, nil, []string{""}, "pass --yes"},
		{"rm unknown", []string{"drains", "rm", "d9", "--yes", "-a", "api"}, 1, []string{"DELETE /api/apps/api/drains/d9"}, []string{""}, `drain "d9" of app "api" not found`},

		{"requests", []string{"metrics", "-a", "api"}, 0, []string{"metric=requests"}, []string{
			"requests requests per 1m0s, 2026-11-29T10:00:00Z to 2026-11-29T10:05:00Z",
			"2xx ▁▂█▅▂ min 0 requests max 70 requests last 5 requests",
			"5xx ▁▁█▁▁ min 0 requests max 2 requests last 0 requests",
		}, ""},
		{"latency", []string{"metrics", "--metric", "latency", "--step", "5m", "--since", "6h", "-a", "api"}, 0, []string{"metric=latency", "step=300"}, []string{
			"latency ms per 5m0s, 2026-11-29T10:00:00Z to 2026-11-29T10:15:00Z",
			"p50 █ ▁ min 3.90 ms max 4.20 ms last 3.90 ms",
			"p99 █ ▁ min 95 ms max 180 ms last 95 ms",
		}, ""},
		{"memory with its limit", []string{"metrics", "--metric", "memory", "--process", "web", "-a", "api"}, 0, []string{"metric=memory", "process=web"}, []string{
			"memory bytes per 1m0s, 2026-11-29T10:00:00Z to 2026-11-29T10:02:00Z",
			"web.1 ▁█ min 50.0 MiB max 60.0 MiB last 60.0 MiB",
			"limit 256.0 MiB",
		}, ""},
		{"a table", []string{"metrics", "--metric", "latency", "--table", "-a", "api"}, 0, []string{"metric=latency"}, []string{
			"TIME p50 p99",
			"2026-11-30T10:00:00Z 4.20 ms 180 ms",
			"2026-11-30T10:05:00Z - -",
			"2026-11-30T10:10:00Z 3.90 ms 95 ms",
		}, ""},
		{"a table with the limit", []string{"metrics", "--metric", "memory", "--table", "-a", "api"}, 0, []string{"metric=memory"}, []string{
			"TIME web.1",
			"2026-11-30T10:00:00Z 50.0 MiB",
			"2026-11-30T10:01:00Z 60.0 MiB",
			"limit 256.0 MiB",
		}, ""},
		{"nothing", []string{"metrics", "--metric", "cpu", "-a", "api"}, 0, []string{"metric=cpu"}, []string{
			"cpu cores per 1m0s, 2026-11-29T10:00:00Z to 2026-11-29T10:01:00Z",
			"Nothing in this window.",
		}, ""},
		{"beyond retention", []string{"metrics", "--metric", "instances", "--since", "7d", "-a", "api"}, 1, []string{"metric=instances"}, []string{""},
			"beyond_retention: start: the nestling plan keeps metrics 1 day"},
		{"a bad metric", []string{"metrics", "--metric", "disk", "-a", "api"}, 2, nil, []string{""}, `--metric "disk"`},
		{"a bad step", []string{"metrics", "--step", "10m", "-a", "api"}, 2, nil, []string{""}, `--step "10m": want 1m, 5m or 1h`},
		{"a bad process", []string{"metrics", "--process", "Web!", "-a", "api"}, 2, nil, []string{""}, `--process "Web!"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.take()
			code, out, stderr := run(t, srv.URL, "", tc.args...)
			calls := fake.take()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			if tc.err != "" && !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q in it", stderr, tc.err)
			}
			if tc.out != nil && !reflect.DeepEqual(lines(out), tc.out) {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(tc.out, "\n"))
			}
			if tc.args[0] == "metrics" && tc.calls != nil {
				if len(calls) != 1 || !strings.HasPrefix(calls[0], "GET /api/apps/api/metrics?") {
					t.Fatalf("calls %q", calls)
				}
				for _, want := range append(tc.calls, "start=") {
					if !strings.Contains(calls[0], want) {
						t.Errorf("call %q: want %q in it", calls[0], want)
					}
				}
				return
			}
			if !reflect.DeepEqual(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			if tc.name == "add https" && (strings.Count(out+stderr, secret) != 1 || strings.Contains(stderr, secret)) {
				t.Errorf("the secret must be printed once, on stdout: stdout %q stderr %q", out, stderr)
			}
		})
	}
	// --json prints the API's answer, the secret with it (the one time it exists).
	code, out, _ := run(t, srv.URL, "", "drains", "add", "https://collector.example.com/x", "-a", "api", "--json")
	if code != 0 || !strings.Contains(out, `"secret": "`+secret+`"`) {
		t.Fatalf("--json: exit %d stdout %q", code, out)
	}
}

func f64(v float64) *float64 { return &v }

func TestSparkline(t *testing.T) {
	cases := []struct {
		name string
		in   []*float64
		want string
	}{
		{"empty", nil, ""},
		{"rising", []*float64{f64(0), f64(1), f64(2), f64(3), f64(4), f64(5), f64(6), f64(7)}, "▁▂▃▄▅▆▇█"},
		{"scaled from the smallest", []*float64{f64(100), f64(150), f64(200)}, "▁▅█"},
		{"nulls are gaps", []*float64{f64(1), nil, f64(3), nil}, "▁ █ "},
		{"all null", []*float64{nil, nil}, "  "},
		{"flat zero", []*float64{f64(0), f64(0), f64(0)}, "▁▁▁"},
		{"flat, not zero", []*float64{f64(5), f64(5)}, "▄▄"},
		{"one value", []*float64{f64(42)}, "▄"},
		{"rounded to the nearest height", []*float64{f64(0), f64(0.49), f64(0.51), f64(1)}, "▁▄▅█"},
		{"negative values", []*float64{f64(-1), f64(0), f64(1)}, "▁▅█"},
	}
	for _, tc := range cases {
		if got := Sparkline(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v          float64
		unit, want string
	}{
		{3, "requests", "3 requests"}, {2.5, "requests", "2.5 requests"}, {1, "instances", "1 instances"},
		{4.25, "ms", "4.25 ms"}, {180, "ms", "180 ms"}, {0.125, "cores", "0.125 cores"},
		{512, "bytes", "512 B"}, {2048, "bytes", "2.0 KiB"}, {52428800, "bytes", "50.0 MiB"}, {3 << 30, "bytes", "3.0 GiB"},
	} {
		if got := formatValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("%v %s: %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	q, err := ParseMetrics(MetricsFlags{Metric: "latency", Since: "6h", Step: "5m", Process: "web.1"}, now)
	want := api.MetricsQuery{Metric: "latency", Start: "2026-11-29T06:00:00Z", Step: 300, Process: "web.1"}
	if err != nil || q != want {
		t.Fatalf("%+v %v, want %+v", q, err, want)
	}
	// A preview's process is a filter like any other.
	if _, err := ParseMetrics(MetricsFlags{Metric: "cpu", Since: "1h", Process: "preview.a1b2c3"}, now); err != nil {
		t.Fatal(err)
	}
	for f, msg := range map[MetricsFlags]string{
		{Metric: "", Since: "1h"}:                     "--metric",
		{Metric: "requests", Since: "an hour"}:        `--since "an hour"`,
		{Metric: "requests", Since: "1h", Step: "60"}: `--step "60"`,
	} {
		if _, err := ParseMetrics(f, now); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%+v: %v, want %q", f, err, msg)
		}
	}
}
