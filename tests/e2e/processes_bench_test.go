package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// BenchmarkProcesses is `make bench-processes` (issue 38): how long a scale-up takes to serve,
// how evenly the edge spreads requests over three web instances, and how late cron runs start
// after their tick. The account is on flock (three web instances) and the stack lowers the
// plan's minimum cron interval to a minute (DEPLOYS_CRON_MIN_INTERVAL_MINUTES, test-only).
// PROCESSES_BENCH_CRON_RUNS (default 20) sets how many every-minute ticks are measured.
func BenchmarkProcesses(b *testing.B) {
	s := harness.Start(b, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "DEPLOYS_CRON_MIN_INTERVAL_MINUTES": "1"}})
	a := s.NewAccount(b, "procbench")
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock"); err != nil {
		b.Fatalf("set-plan: %v\n%s", err, out)
	}
	slug := createApp(b, s, a.Token, "service")
	time.Sleep(time.Second) // the plan_changed event reaches the deploys service
	manifest, _ := json.Marshal(map[string]any{"processes": map[string]string{"web": "node server.js"}})
	r := deploySource(b, s, a.Token, slug, sourceTarball(b, map[string]string{"tori.json": string(manifest), "server.js": processServer}), "")
	if r.Status != http.StatusCreated {
		b.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(b, s, a.Token, slug, r.Map(b)["id"].(string), "live")

	// 1. PATCH formation → the new web instance answers through the edge.
	var scaleUps []time.Duration
	for i := 0; i < 3; i++ {
		start := time.Now()
		scaleTo(b, s, a.Token, slug, 2)
		harness.Eventually(b, 60*time.Second, "web.2 to serve", func() bool {
			status, body := edgeGet(b, s, slug, "/")
			return status == http.StatusOK && body == "web.2"
		})
		scaleUps = append(scaleUps, time.Since(start))
		scaleTo(b, s, a.Token, slug, 1)
		pollSlowly(b, 60*time.Second, "web.2 to stop", func() bool {
			var list []formationEntry
			s.Get(b, "/api/apps/"+slug+"/formation", a.Token).JSON(b, &list)
			return len(list) > 0 && list[0].Running == 1
		})
	}
	sort.Slice(scaleUps, func(i, j int) bool { return scaleUps[i] < scaleUps[j] })
	b.ReportMetric(scaleUps[len(scaleUps)/2].Seconds(), "s-scale-to-serving")

	// 2. Three instances: 600 requests from 6 clients; each instance's share of a third.
	scaleTo(b, s, a.Token, slug, 3)
	pollSlowly(b, 60*time.Second, "three web instances", func() bool {
		var list []formationEntry
		s.Get(b, "/api/apps/"+slug+"/formation", a.Token).JSON(b, &list)
		return len(list) > 0 && list[0].Running == 3
	})
	counts := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	const clients, each = 6, 100
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One kept-alive client each, as browsers are: the edge sheds a burst of new
			// handshakes from one address, and the spread is the edge's choice per request.
			client := s.EdgeClient()
			for i := 0; i < each; i++ {
				answer := "error"
				if resp, err := client.Get(s.EdgeURL(slug+".apps.localhost", "/")); err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					answer = string(body)
					if resp.StatusCode != http.StatusOK {
						answer = fmt.Sprintf("status %d", resp.StatusCode)
					}
				}
				mu.Lock()
				counts[answer]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	worst := 0.0
	for _, inst := range []string{"web.1", "web.2", "web.3"} {
		share := float64(counts[inst]) / (clients * each)
		dev := (share*3 - 1) * 100
		b.Logf("%s served %d of %d requests (%.1f %% of a third off)", inst, counts[inst], clients*each, dev)
		worst = max(worst, abs(dev))
	}
	b.Logf("answers by instance: %v", counts)
	b.ReportMetric(worst, "pct-worst-off-a-third")

	// 3. Cron tick accuracy: an every-minute job's scheduled runs, start minus tick.
	runs := 20
	if v, err := strconv.Atoi(os.Getenv("PROCESSES_BENCH_CRON_RUNS")); err == nil && v > 0 {
		runs = v
	}
	if r := post(s, b, "/api/apps/"+slug+"/crons", a.Token, map[string]any{"name": "tick", "schedule": "* * * * *", "command": "true"}); r.Status != http.StatusCreated {
		b.Fatalf("create cron: %d %s", r.Status, r.Body)
	}
	var delays []time.Duration
	pollSlowly(b, time.Duration(runs+2)*time.Minute, fmt.Sprintf("%d scheduled runs", runs), func() bool {
		var list []cronRun
		s.Get(b, "/api/apps/"+slug+"/crons/tick/runs?limit=200", a.Token).JSON(b, &list)
		delays = delays[:0]
		for _, run := range list {
			if run.Trigger != "scheduled" || run.StartedAt == nil {
				continue
			}
			tick, _ := time.Parse(time.RFC3339Nano, run.ScheduledFor)
			started, _ := time.Parse(time.RFC3339Nano, *run.StartedAt)
			delays = append(delays, started.Sub(tick))
		}
		return len(delays) >= runs
	})
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	p50, p99 := delays[len(delays)/2], delays[min(len(delays)-1, len(delays)*99/100)]
	b.ReportMetric(float64(p50.Milliseconds()), "ms-cron-delay-p50")
	b.ReportMetric(float64(p99.Milliseconds()), "ms-cron-delay-p99")
	b.Logf("figures: scale-to-serving median %v (of %v); worst instance %.1f %% off a third; cron start delay p50 %v p99 %v over %d runs",
		scaleUps[len(scaleUps)/2].Round(time.Millisecond), scaleUps, worst, p50, p99, len(delays))
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func scaleTo(b *testing.B, s *harness.Stack, token, slug string, web int) {
	b.Helper()
	r := s.Do(b, harness.Request{Method: http.MethodPatch, Path: "/api/apps/" + slug + "/formation", Token: token,
		Body: map[string]any{"updates": []map[string]any{{"type": "web", "quantity": web}}}})
	if r.Status != http.StatusOK {
		b.Fatalf("scale web=%d: %d %s", web, r.Status, r.Body)
	}
}
