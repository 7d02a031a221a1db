package e2e

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// BenchmarkScale is `make bench-scale` (issue 41): what each request costs when the control
// plane and its zone hold 1,000 and then 10,000 apps. One stack; the world is seeded to the
// first size, measured SCALE_BENCH_ROUNDS times, grown to the next size and measured again;
// every figure's medians are compared between the sizes and printed last as
// `growth <what> 10k/1k: p50 <n>x, p99 <n>x` (or `<n>x` for a single figure).
//
// SCALE_BENCH_SIZES (default "1000,10000"), SCALE_BENCH_ACCOUNTS (default 2000),
// SCALE_BENCH_ROUNDS (default 3) and SCALE_BENCH_LOG_ENTRIES_PER_APP (default 1000: ten
// million at 10,000 apps) set the world; a quick look: SIZES=100,400 ACCOUNTS=50.
//
// Run: make bench-scale (go test -run '^$' -bench BenchmarkScale -benchtime 1x -v .)
func BenchmarkScale(b *testing.B) {
	cfg := scaleConfigFromEnv(b)
	env := scaleStackEnv()
	// The agent's and its edge's profile servers (loopback): measureMemory asks both to
	// return their garbage before it reads, and SCALE_BENCH_PROFILE_DIR profiles the edge.
	// PROFILE_ADDR is every service's setting, so it is set once the others have started:
	// only the zone agent, restarted by every seed and measure, reads it.
	env["ZONE_AGENT_PROFILE_ADDR"] = testinfra.FreeAddr(b)
	s := harness.Start(b, harness.Options{Env: env})
	s.Env["PROFILE_ADDR"] = testinfra.FreeAddr(b)
	keepLogs(b, s)
	w := &scaleWorld{cfg: cfg}
	results := map[int][]scaleRound{}
	for _, size := range cfg.sizes {
		start := time.Now()
		seedControlPlane(b, s, w, size) // scalebench_seed_api_test.go
		seedZone(b, s, w)               // scalebench_seed_zone_test.go
		b.Logf("seeded %d apps over %d accounts in %s", len(w.apps), len(w.accounts), time.Since(start).Round(time.Second))
		vacuumSeeded(b, s)
		for round := 1; round <= cfg.rounds; round++ {
			var r scaleRound
			r.add(measureAPI(b, s, w)...)       // scalebench_api_test.go
			r.add(measureEdge(b, s, w)...)      // scalebench_zone_test.go
			r.add(measureRestart(b, s, w)...)   // scalebench_zone_test.go
			r.add(measureMemory(b, s, w)...)    // scalebench_zone_test.go
			r.add(measureRetention(b, s, w)...) // scalebench_api_test.go
			for _, f := range r.figures {
				b.Logf("size %d round %d: %s", size, round, f)
			}
			results[size] = append(results[size], r)
		}
	}
	printGrowth(b, cfg.sizes, results)
}

// keepLogs, with SCALE_BENCH_PROFILE_DIR set, copies the stack's logs there when the bench
// ends: each service's access lines (route, status, duration, trace id) show which service a
// slow request spent its time in.
func keepLogs(b *testing.B, s *harness.Stack) {
	dir := os.Getenv("SCALE_BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	b.Cleanup(func() {
		logs, _ := filepath.Glob(filepath.Join(s.LogDir, "*.log"))
		for _, src := range logs {
			body, err := os.ReadFile(src)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "stack-"+filepath.Base(src)), body, 0o644)
			}
			if err != nil {
				b.Logf("keep %s: %v", src, err)
			}
		}
	})
}

// vacuumSeeded vacuums and analyzes the stack's database once a size is seeded, as a house
// in service has been: right after millions of rows arrive by COPY, autovacuum's catch-up on
// them runs for minutes during the rounds and slows every route at the larger size alone
// (seen as every API p50 ~1.4x at 10k in one run and not in another).
func vacuumSeeded(b *testing.B, s *harness.Stack) {
	b.Helper()
	start := time.Now()
	conn, err := pgx.Connect(context.Background(), s.Env["DATABASE_URL"])
	if err != nil {
		b.Fatalf("vacuum: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "VACUUM (ANALYZE)"); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
	b.Logf("vacuumed and analyzed the seeded database in %s", time.Since(start).Round(time.Second))
}

// scaleStackEnv is the stack's environment for the bench: quieter logs (a debug line per
// request would measure the log writer) and sign-ins without the public rate limit. The
// zone's services nap after 10 s idle, so the bench finds its sample napping soon after
// waking it (not less: the nap counts from the edge's last dial, so a first answer slower
// than that under a hundred wakes at once would see its instance stopped under it); its
// app uids are a range of their own (other stacks on the host use the default one), so the processes counted as the sample's are the sample's. The bench's one
// address stands for many visitors: it keeps a connection open to each of up to a thousand
// sites, past the edge's default bound per address.
func scaleStackEnv() map[string]string {
	return map[string]string{
		"LOG_LEVEL":             "info",
		"AUTH_LIMIT_PER_15MIN":  "1000000",
		"ZONE_IDLE_AFTER":       "10s",
		"ZONE_APP_UID_BASE":     "600000",
		"ZONE_APP_UID_COUNT":    "20000",
		"EDGE_MAX_CONNS_PER_IP": "4096",
		// One *.apps.localhost certificate from the zone's local CA, as a zone this size runs
		// with the public CA's DNS-01 wildcard (docs/scale.md): per-host certificates would be
		// 10,000 orders and, after a restart, 10,000 loads from Postgres at first handshakes.
		"ZONE_TLS_WILDCARD": "local",
		// The logs service's partition upkeep every second, so a retention round waits
		// for it a second, not its default quarter of an hour (measureRetention).
		"LOGS_MAINTENANCE_INTERVAL": "1s",
	}
}

type scaleConfig struct {
	sizes             []int
	accounts          int
	rounds            int
	logEntriesPerApp  int
	heavyAccountApps  int // the account whose GET /api/apps is measured has this many apps
	servicesPerTenApp int // a tenth of the apps are services that nap
	hostnamesPerCent  int // custom hostnames per hundred apps
	deploysPerApp     int
}

func scaleConfigFromEnv(b *testing.B) scaleConfig {
	cfg := scaleConfig{accounts: 2000, rounds: 3, logEntriesPerApp: 1000, heavyAccountApps: 50,
		servicesPerTenApp: 1, hostnamesPerCent: 5, deploysPerApp: 10}
	for _, f := range strings.Split(cmp.Or(os.Getenv("SCALE_BENCH_SIZES"), "1000,10000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("SCALE_BENCH_SIZES=%q: want sizes of at least 100, smallest first", os.Getenv("SCALE_BENCH_SIZES"))
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	if len(cfg.sizes) != 2 || cfg.sizes[0] >= cfg.sizes[1] {
		b.Fatalf("SCALE_BENCH_SIZES=%q: want two sizes, smallest first", os.Getenv("SCALE_BENCH_SIZES"))
	}
	for name, dst := range map[string]*int{"SCALE_BENCH_ACCOUNTS": &cfg.accounts, "SCALE_BENCH_ROUNDS": &cfg.rounds,
		"SCALE_BENCH_LOG_ENTRIES_PER_APP": &cfg.logEntriesPerApp} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				b.Fatalf("%s=%q: want a positive count", name, v)
			}
			*dst = n
		}
	}
	return cfg
}

// scaleAccount is one seeded account. Token is set for the accounts the bench acts as
// (signed in through the API); the others exist only to own apps.
type scaleAccount struct {
	ID    string
	Email string
	Token string
}

// scaleApp is one seeded app and what the zone must serve for it.
type scaleApp struct {
	Account      int // index in scaleWorld.accounts
	ID           string
	Slug         string
	Kind         string   // "static" or "service"
	DeployIDs    []string // oldest first; the last is live
	Hostnames    []string
	ZoneSeeded   bool // seedZone has put its live revision in the zone
	Measured     bool // one of the apps the bench acts on (never seeded behind the API's back)
	WakeSample   bool // one of the napping services whose wake and restart are measured
	SeedLogsDone bool
}

// scaleWorld is everything seeded so far; each seed step adds to it.
type scaleWorld struct {
	cfg      scaleConfig
	accounts []scaleAccount
	apps     []scaleApp
	heavy    int // index of the account with cfg.heavyAccountApps apps (GET /api/apps)
	// extra holds what a seed or measure step keeps between calls (its own keys).
	extra map[string]any
	// wakeProfiles counts the profiled sequences of wakes, naming their files.
	wakeProfiles int
	// hostProfiles counts the restarts recorded with perf, naming their files.
	hostProfiles int
}

// liveDeploy is the app's live deploy id.
func (a scaleApp) liveDeploy() string {
	if len(a.DeployIDs) == 0 {
		return ""
	}
	return a.DeployIDs[len(a.DeployIDs)-1]
}

// scaleFigure is one measured figure of a round: a latency distribution (P50, P99) or a
// single value (Value, Unit) when P50 is zero.
type scaleFigure struct {
	What  string
	P50   time.Duration
	P99   time.Duration
	Value float64
	Unit  string
}

func (f scaleFigure) single() bool { return f.P50 == 0 && f.P99 == 0 }

func (f scaleFigure) String() string {
	if f.single() {
		return fmt.Sprintf("%s: %.4g %s", f.What, f.Value, f.Unit)
	}
	return fmt.Sprintf("%s: p50 %s, p99 %s", f.What, f.P50, f.P99)
}

// latencyFigure summarizes samples as p50/p99.
func latencyFigure(what string, samples []time.Duration) scaleFigure {
	if len(samples) == 0 {
		return scaleFigure{What: what}
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.5) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return scaleFigure{What: what, P50: at(0.50), P99: at(0.99)}
}

type scaleRound struct{ figures []scaleFigure }

func (r *scaleRound) add(f ...scaleFigure) { r.figures = append(r.figures, f...) }

// printGrowth prints each figure's medians over the rounds at both sizes, then the growth
// lines, last, so they end the output.
func printGrowth(b *testing.B, sizes []int, results map[int][]scaleRound) {
	small, large := sizes[0], sizes[1]
	medians := func(size int) (order []string, by map[string]scaleFigure) {
		by = map[string]scaleFigure{}
		vals := map[string][]scaleFigure{}
		for _, r := range results[size] {
			for _, f := range r.figures {
				if _, seen := vals[f.What]; !seen {
					order = append(order, f.What)
				}
				vals[f.What] = append(vals[f.What], f)
			}
		}
		for what, fs := range vals {
			m := fs[0]
			m.P50 = medianDuration(fs, func(f scaleFigure) time.Duration { return f.P50 })
			m.P99 = medianDuration(fs, func(f scaleFigure) time.Duration { return f.P99 })
			v := make([]float64, len(fs))
			for i, f := range fs {
				v[i] = f.Value
			}
			sort.Float64s(v)
			m.Value = v[len(v)/2]
			by[what] = m
		}
		return order, by
	}
	order, smallBy := medians(small)
	_, largeBy := medians(large)
	label := fmt.Sprintf("%s/%s", sizeLabel(large), sizeLabel(small))
	var lines []string
	for _, what := range order {
		s, l := smallBy[what], largeBy[what]
		fmt.Printf("medians %s: %s apps: %s; %s apps: %s\n", what, sizeLabel(small), s, sizeLabel(large), l)
		if s.single() {
			lines = append(lines, fmt.Sprintf("growth %s %s: %s (%.4g → %.4g %s)", what, label, ratio(l.Value, s.Value), s.Value, l.Value, s.Unit))
			continue
		}
		lines = append(lines, fmt.Sprintf("growth %s %s: p50 %s, p99 %s", what, label,
			ratio(l.P50.Seconds(), s.P50.Seconds()), ratio(l.P99.Seconds(), s.P99.Seconds())))
	}
	for i, by := range []map[string]scaleFigure{smallBy, largeBy} {
		size := sizes[i]
		if d, ok := by["logs during retention"]; ok {
			q := by["logs without retention"]
			lines = append(lines, fmt.Sprintf("retention %s: logs p99 during the drop / without: %s (%s / %s; target ≤ 1.5x)",
				sizeLabel(size), ratio(d.P99.Seconds(), q.P99.Seconds()), d.P99, q.P99))
		}
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}

func medianDuration(fs []scaleFigure, of func(scaleFigure) time.Duration) time.Duration {
	v := make([]time.Duration, len(fs))
	for i, f := range fs {
		v[i] = of(f)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

func ratio(large, small float64) string {
	if small <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", large/small)
}

func sizeLabel(n int) string {
	if n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
