package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/contract/appmetrics"
	"tori.dev/tests/e2e/harness"
)

// metricsAnswer is GET /api/apps/{slug}/metrics's body.
type metricsAnswer struct {
	Metric string          `json:"metric"`
	Unit   string          `json:"unit"`
	Step   int             `json:"step"`
	Start  string          `json:"start"`
	End    string          `json:"end"`
	Limit  *float64        `json:"limit"`
	Series []metricsSeries `json:"series"`
}

type metricsSeries struct {
	Labels map[string]string `json:"labels"`
	Points [][2]*float64     `json:"points"`
}

// sum is the series' points added up, nulls as nothing.
func (s metricsSeries) sum() float64 {
	var n float64
	for _, p := range s.Points {
		if p[1] != nil {
			n += *p[1]
		}
	}
	return n
}

// readMetrics asks for one metric and checks the answer's shape: its members, its unit, and
// points at every step from start (aligned down to the step) while before end.
func readMetrics(t *testing.T, s *harness.Stack, token, slug string, q url.Values) metricsAnswer {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/metrics?"+q.Encode(), token)
	if r.Status != http.StatusOK {
		t.Fatalf("metrics %s: %d %s", q.Encode(), r.Status, r.Body)
	}
	want := []string{"metric", "unit", "step", "start", "end", "series"}
	if q.Get("metric") == appmetrics.Memory {
		want = append(want, "limit")
	}
	expectKeys(t, "metrics "+q.Get("metric"), r.Map(t), want...)
	var m metricsAnswer
	r.JSON(t, &m)
	units := map[string]string{appmetrics.Requests: "requests", appmetrics.Latency: "ms", appmetrics.CPU: "cores", appmetrics.Memory: "bytes", appmetrics.Instances: "instances"}
	if m.Metric != q.Get("metric") || m.Unit != units[m.Metric] {
		t.Fatalf("metric %q unit %q: %s", m.Metric, m.Unit, r.Body)
	}
	if want := q.Get("step"); want != "" && strconv.Itoa(m.Step) != want {
		t.Fatalf("step %d, asked %s", m.Step, want)
	}
	start, err1 := time.Parse(time.RFC3339, m.Start)
	end, err2 := time.Parse(time.RFC3339, m.End)
	if err1 != nil || err2 != nil || end.Before(start) || m.Step <= 0 {
		t.Fatalf("start %q end %q step %d", m.Start, m.End, m.Step)
	}
	for _, series := range m.Series {
		if len(series.Points) == 0 {
			t.Fatalf("a series without points: %s", r.Body)
		}
		first := *series.Points[0][0]
		if int64(first)%int64(m.Step) != 0 || first > float64(start.Unix()) || first <= float64(start.Unix()-int64(m.Step)) {
			t.Fatalf("first point at %v: not start %s aligned down to %d s", first, m.Start, m.Step)
		}
		for i := 1; i < len(series.Points); i++ {
			if *series.Points[i][0]-*series.Points[i-1][0] != float64(m.Step) {
				t.Fatalf("points %v and %v are not one step apart", *series.Points[i-1][0], *series.Points[i][0])
			}
		}
		// end is exclusive: the last point is the last step that begins before it.
		if last := *series.Points[len(series.Points)-1][0]; last >= float64(end.Unix()) || last < float64(end.Unix()-int64(m.Step)) {
			t.Fatalf("last point at %v: not the last step before end %s", last, m.End)
		}
	}
	return m
}

// testAppMetrics: the requests a static site answered, counted by status class and timed;
// a service's instance's CPU and memory; the read's parameter rules.
func testAppMetrics(t *testing.T, s *harness.Stack) {
	concurrently(t, map[string]func(*testing.T){
		"RequestsAndLatency": func(t *testing.T) { metricsRequests(t, s) },
		"InstanceUsage":      func(t *testing.T) { metricsUsage(t, s) },
	})
}

// requestTally counts what the edge answered over TLS for one host, by status class: exactly
// the requests the edge counts for the app.
type requestTally struct {
	mu      sync.Mutex
	byClass map[string]int
	total   int
}

func (c *requestTally) get(t testing.TB, s *harness.Stack, host, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.EdgeURL(host, path), nil)
	resp, err := s.EdgeClient().Do(req)
	if err != nil {
		return 0 // no answer (no certificate yet): nothing the edge counts
	}
	resp.Body.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byClass == nil {
		c.byClass = map[string]int{}
	}
	c.byClass[appmetrics.StatusClasses[appmetrics.StatusClass(resp.StatusCode)]]++
	c.total++
	return resp.StatusCode
}

func metricsRequests(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "metrics")
	slug := createApp(t, s, a.Token, "static")
	since := time.Now().Truncate(time.Minute).Add(-time.Minute)
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "counted"})
	expectStatus(t, "deploy", r, http.StatusCreated)
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")

	// Every answer over TLS is counted, the waiting ones too. Those before the first 200 may
	// be the edge's before it knew the app (its 404 for an unknown host, which no app's count
	// holds): they are the only ones the sums may lack.
	host := slug + ".apps.localhost"
	var tally requestTally
	uncertain := 0
	pollEvery(t, 30*time.Second, 200*time.Millisecond, "the site to answer", func() bool {
		status := tally.get(t, s, host, "/")
		if status != 0 && status != http.StatusOK {
			uncertain++
		}
		return status == http.StatusOK
	})
	const ok, missing = 24, 12
	for i := 0; i < ok+missing; i++ {
		path, want := "/", http.StatusOK
		if i%3 == 2 {
			path, want = fmt.Sprintf("/missing-%d", i), http.StatusNotFound
		}
		if got := tally.get(t, s, host, path); got != want {
			t.Fatalf("GET %s: %d, want %d", path, got, want)
		}
	}
	t.Logf("requests answered: %v (%d before the first 200 were not)", tally.byClass, uncertain)

	q := url.Values{"metric": {appmetrics.Requests}, "start": {since.Format(time.RFC3339)}}
	var sums map[string]float64
	matches := func(sums map[string]float64) bool {
		for class, n := range tally.byClass {
			if got := int(sums[class]); got > n || (class == "4xx" && got < n-uncertain) || (class != "4xx" && got < n) {
				return false
			}
		}
		for class, got := range sums {
			if got > 0 && tally.byClass[class] == 0 {
				t.Fatalf("%v requests of class %s counted, none made", got, class)
			}
		}
		return true
	}
	pollEvery(t, 30*time.Second, 500*time.Millisecond, fmt.Sprintf("metric=requests to sum to %v", tally.byClass), func() bool {
		m := readMetrics(t, s, a.Token, slug, q)
		sums = map[string]float64{}
		for _, series := range m.Series {
			class := series.Labels["status"]
			if len(series.Labels) != 1 || !strings.HasSuffix(class, "xx") {
				t.Fatalf("requests series labels %v", series.Labels)
			}
			if _, dup := sums[class]; dup {
				t.Fatalf("two series for %s", class)
			}
			sums[class] = series.sum()
		}
		for class, n := range sums {
			if int(n) > tally.byClass[class] {
				t.Fatalf("%s: %v counted, %d made", class, n, tally.byClass[class])
			}
		}
		return matches(sums)
	})
	// A coarser step adds up to the same.
	for _, step := range []string{"300", "3600"} {
		q5 := url.Values{"metric": {appmetrics.Requests}, "start": q["start"], "step": {step}}
		m := readMetrics(t, s, a.Token, slug, q5)
		for _, series := range m.Series {
			if series.sum() != sums[series.Labels["status"]] {
				t.Fatalf("step %s: %s sums to %v, step 60 to %v", step, series.Labels["status"], series.sum(), sums[series.Labels["status"]])
			}
		}
	}

	// Latency percentiles: one series per quantile, p50 ≤ p95 ≤ p99 wherever there were
	// requests, null where none.
	m := readMetrics(t, s, a.Token, slug, url.Values{"metric": {appmetrics.Latency}, "start": q["start"]})
	byQ := map[string]metricsSeries{}
	for _, series := range m.Series {
		byQ[series.Labels["quantile"]] = series
	}
	if len(m.Series) != 3 || len(byQ["0.5"].Points) == 0 || len(byQ["0.95"].Points) != len(byQ["0.5"].Points) || len(byQ["0.99"].Points) != len(byQ["0.5"].Points) {
		t.Fatalf("latency series: %+v", m.Series)
	}
	seen := 0
	for i := range byQ["0.5"].Points {
		p50, p95, p99 := byQ["0.5"].Points[i][1], byQ["0.95"].Points[i][1], byQ["0.99"].Points[i][1]
		if (p50 == nil) != (p95 == nil) || (p50 == nil) != (p99 == nil) {
			t.Fatalf("point %d: some quantiles null, some not", i)
		}
		if p50 == nil {
			continue
		}
		seen++
		if *p50 < 0 || *p50 > *p95 || *p95 > *p99 {
			t.Fatalf("point %d: p50 %v p95 %v p99 %v", i, *p50, *p95, *p99)
		}
	}
	if seen == 0 {
		t.Fatal("no latency where requests were counted")
	}

	// Parameter rules: the parameter's name first in the message; beyond the plan's
	// retention (nestling: one day) is 410.
	for param, bad := range map[string]url.Values{
		"step":   {"metric": {appmetrics.Requests}, "step": {"61"}},
		"metric": {"metric": {"bogus"}},
		"start":  {"metric": {appmetrics.Requests}, "start": {"yesterday"}},
		"end":    {"metric": {appmetrics.Requests}, "end": {time.Now().Add(-2 * time.Hour).Format(time.RFC3339)}, "start": {time.Now().Add(-time.Hour).Format(time.RFC3339)}},
	} {
		e := expectCode(t, "metrics with a bad "+param, s.Get(t, "/api/apps/"+slug+"/metrics?"+bad.Encode(), a.Token), http.StatusBadRequest, codeInvalidParam)
		if !strings.HasPrefix(e.Message, param) {
			t.Fatalf("bad %s: message %q does not name it first", param, e.Message)
		}
	}
	old := time.Now().Add(-26 * time.Hour)
	expectCode(t, "metrics beyond retention", s.Get(t, "/api/apps/"+slug+"/metrics?"+url.Values{"metric": {appmetrics.Requests},
		"start": {old.Format(time.RFC3339)}, "end": {old.Add(time.Hour).Format(time.RFC3339)}}.Encode(), a.Token), http.StatusGone, "beyond_retention")

	b := s.NewAccount(t, "metrics-other")
	expectStatus(t, "another account's metrics", s.Get(t, "/api/apps/"+slug+"/metrics?metric=requests", b.Token), http.StatusNotFound)
}

// metricsUsage: a running service's web.1 shows CPU and memory (with the plan's limit
// beside it) and one instance, sampled every ZONE_METRICS_SAMPLE_INTERVAL.
func metricsUsage(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "metrics-usage")
	slug := createApp(t, s, a.Token, "service")
	since := time.Now().Truncate(time.Minute).Add(-time.Minute).Format(time.RFC3339)
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"m"}`}), "")
	expectStatus(t, "deploy", r, http.StatusCreated)
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "none unreleased m")

	// One web.1 series, its points non-negative, some sampled.
	instanceSeries := func(metric string) (metricsAnswer, metricsSeries, bool) {
		m := readMetrics(t, s, a.Token, slug, url.Values{"metric": {metric}, "start": {since}})
		var found metricsSeries
		ok := false
		for _, series := range m.Series {
			if series.Labels["process"] != "web" || series.Labels["instance"] != "web.1" || len(series.Labels) != 2 {
				t.Fatalf("%s series labels %v", metric, series.Labels)
			}
			for _, p := range series.Points {
				if p[1] != nil && *p[1] < 0 {
					t.Fatalf("%s: a negative point %v", metric, *p[1])
				}
				if p[1] != nil && (metric == appmetrics.CPU || *p[1] > 0) {
					found, ok = series, true
				}
			}
		}
		return m, found, ok
	}
	var mem metricsAnswer
	pollEvery(t, 30*time.Second, 500*time.Millisecond, "web.1's memory", func() bool {
		var ok bool
		mem, _, ok = instanceSeries(appmetrics.Memory)
		return ok
	})
	if mem.Limit == nil || *mem.Limit != float64(256<<20) {
		t.Fatalf("memory limit %v, want nestling's 256 MiB", mem.Limit)
	}
	pollEvery(t, 30*time.Second, 500*time.Millisecond, "web.1's CPU", func() bool {
		_, _, ok := instanceSeries(appmetrics.CPU)
		return ok
	})
	m := readMetrics(t, s, a.Token, slug, url.Values{"metric": {appmetrics.Instances}, "start": {since}, "process": {"web"}})
	most := 0.0
	for _, series := range m.Series {
		if series.Labels["process"] != "web" || len(series.Labels) != 1 {
			t.Fatalf("instances series labels %v", series.Labels)
		}
		for _, p := range series.Points {
			if p[1] != nil && *p[1] > most {
				most = *p[1]
			}
		}
	}
	if most != 1 {
		t.Fatalf("instances of web: at most %v, want 1", most)
	}
	// A process filter of another type matches nothing of web's.
	if m := readMetrics(t, s, a.Token, slug, url.Values{"metric": {appmetrics.Memory}, "start": {since}, "process": {"worker"}}); len(m.Series) != 0 {
		t.Fatalf("process=worker: %+v", m.Series)
	}
}
