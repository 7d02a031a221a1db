package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/profiling"
	"tori.dev/tests/e2e/harness"
)

// wakeProfile, with SCALE_BENCH_PROFILE_DIR set, watches the one-at-a-time wakes of
// measureEdge: a CPU profile of the zone agent over them (<dir>/zone-wakes-<apps>-<n>.cpu.pprof),
// and, when they end, the host's busy share and the processes that used its CPU meanwhile
// (from /proc), with the slowest wakes and their places in the sequence. A wake is mostly
// other processes' time (bwrap, pasta, the app's runtime), so the agent's profile alone
// would not say where a slow one went. Without the variable it does nothing.
type wakeProfile struct {
	dir   string
	start map[string]float64 // "<pid> <comm>" → CPU seconds
	host  [2]uint64          // busy, total jiffies
	began time.Time
	errc  chan error
	file  string
}

var wakeRounds = map[int]int{}

func startWakeProfile(b *testing.B, s *harness.Stack, w *scaleWorld) *wakeProfile {
	b.Helper()
	dir := os.Getenv("SCALE_BENCH_PROFILE_DIR")
	if dir == "" {
		return nil
	}
	wakeRounds[len(w.apps)]++
	p := &wakeProfile{dir: dir, start: processCPU(), host: hostJiffies(), began: time.Now(), errc: make(chan error, 1),
		file: filepath.Join(dir, fmt.Sprintf("zone-wakes-%d-%d.cpu.pprof", len(w.apps), wakeRounds[len(w.apps)]))}
	go func() { p.errc <- profiling.SaveCPU(s.Env["ZONE_AGENT_PROFILE_ADDR"], 20, p.file) }()
	return p
}

func (p *wakeProfile) finish(b *testing.B, wakes []time.Duration) {
	b.Helper()
	if p == nil {
		return
	}
	took := time.Since(p.began)
	host := hostJiffies()
	busy := float64(host[0]-p.host[0]) / float64(max(host[1]-p.host[1], 1))
	end := processCPU()
	type use struct {
		who string
		sec float64
	}
	byComm := map[string]float64{}
	for k, v := range end {
		comm := k[strings.IndexByte(k, ' ')+1:]
		byComm[comm] += v - p.start[k] // a process started meanwhile counts from 0
	}
	var uses []use
	for c, v := range byComm {
		uses = append(uses, use{c, v})
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].sec > uses[j].sec })
	var top []string
	for _, u := range uses[:min(10, len(uses))] {
		top = append(top, fmt.Sprintf("%s %.2fs", u.who, u.sec))
	}
	order := make([]int, len(wakes))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return wakes[order[i]] > wakes[order[j]] })
	var slow []string
	for _, i := range order[:min(5, len(order))] {
		slow = append(slow, fmt.Sprintf("#%d %s", i, wakes[i].Round(time.Millisecond)))
	}
	b.Logf("wakes: %d in %s, host busy %.0f%%; slowest %s; CPU by process: %s", len(wakes), took.Round(time.Millisecond),
		100*busy, strings.Join(slow, ", "), strings.Join(top, ", "))
	if err := <-p.errc; err != nil {
		b.Logf("profile of the zone agent over the wakes (%s): %v", p.file, err)
	}
}

// processCPU is every process's CPU time so far, by "<pid> <comm>" (short-lived processes
// that ended between two readings are not seen: the host's busy share still counts them).
func processCPU() map[string]float64 {
	out := map[string]float64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(raw)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+2:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		out[d.Name()+" "+s[open+1:end]] = (ut + st) / 100 // USER_HZ
	}
	return out
}

// hostJiffies is the host's busy and total CPU time so far (/proc/stat's cpu line).
func hostJiffies() [2]uint64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]uint64{}
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var busy, total uint64
	for i, f := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseUint(f, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return [2]uint64{busy, total}
}
