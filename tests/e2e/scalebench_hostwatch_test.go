package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hostWatch reads, over a stretch of the bench, the host's CPU: the share it was busy, the
// share the hypervisor took from it (steal: the machine slower for reasons outside it), and
// the CPU time each process used. A p50 that moves on routes whose work does not depend on
// the house's size is told apart by it: the house's own processes busier (a cost that grows),
// or the machine slower (steal up, the bench's fixed reference work slower too).
type hostWatch struct {
	began time.Time
	host  hostTimes
	procs map[int]processTime
}

func watchHost() *hostWatch {
	return &hostWatch{began: time.Now(), host: readHostTimes(), procs: processCPU()}
}

// summary is what the host did since watchHost, on one line.
func (h *hostWatch) summary() string {
	took := time.Since(h.began)
	end := readHostTimes()
	total := float64(max(end.total-h.host.total, 1))
	byComm := map[string]float64{}
	for pid, p := range processCPU() {
		// By pid: a kernel worker renames itself after the work it does. A process started
		// meanwhile counts from 0.
		byComm[p.comm] += p.cpu - h.procs[pid].cpu
	}
	comms := make([]string, 0, len(byComm))
	for c := range byComm {
		comms = append(comms, c)
	}
	sort.Slice(comms, func(i, j int) bool { return byComm[comms[i]] > byComm[comms[j]] })
	var top []string
	for _, c := range comms[:min(8, len(comms))] {
		top = append(top, fmt.Sprintf("%s %.2fs", c, byComm[c]))
	}
	return fmt.Sprintf("%s, host busy %.0f%%, stolen %.1f%%; CPU by process: %s", took.Round(time.Millisecond),
		100*float64(end.busy-h.host.busy)/total, 100*float64(end.steal-h.host.steal)/total, strings.Join(top, ", "))
}

// hostTimes is the host's CPU time so far, in jiffies (/proc/stat's cpu line): busy
// (user, nice, system, irq, softirq), stolen, and all of it (those, idle and iowait; guest
// time is already in user).
type hostTimes struct{ busy, steal, total uint64 }

func readHostTimes() hostTimes {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostTimes{}
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var t hostTimes
	for i, f := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseUint(f, 10, 64)
		switch i {
		case 0, 1, 2, 5, 6: // user, nice, system, irq, softirq
			t.busy += n
		case 7:
			t.steal += n
		case 3, 4: // idle, iowait
		default: // guest, guest_nice: counted in user already
			continue
		}
		t.total += n
	}
	return t
}

// processTime is one process's name and CPU seconds so far.
type processTime struct {
	comm string
	cpu  float64
}

// processCPU is every process's CPU time so far, by pid (short-lived processes that ended
// between two readings are not seen: the host's busy share still counts them).
func processCPU() map[int]processTime {
	out := map[int]processTime{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
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
		out[pid] = processTime{comm: s[open+1 : end], cpu: (ut + st) / 100} // USER_HZ
	}
	return out
}
