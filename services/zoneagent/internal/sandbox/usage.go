package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage is what one group has used, read from its cgroup files: the customer's CPU and
// memory metrics (README "Metrics").
type Usage struct {
	// CPUMicros is the CPU time its processes used since the group was made (v2 cpu.stat
	// usage_usec; v1 cpuacct.usage, in nanoseconds there).
	CPUMicros int64
	// MemoryBytes is the memory charged to it now (memory.current; v1 memory.usage_in_bytes).
	MemoryBytes int64
	// MemoryLimitBytes is its memory limit (memory.max; v1 memory.limit_in_bytes); 0 when
	// it has none.
	MemoryLimitBytes int64
}

// ErrNoCPUAccounting is a v1 host whose cgroups count no CPU time (no cpuacct controller).
var ErrNoCPUAccounting = errors.New("cgroup v1 without cpuacct: no CPU time to read")

// unlimited is the smallest memory limit taken as none: v1 writes "no limit" as the largest
// page-aligned int64.
const unlimited = int64(1) << 62

// LeafUsage reads the usage of one leaf of the app's group (leaf "": the group itself).
func (g *Cgroups) LeafUsage(appID, leaf string) (Usage, error) {
	if g.V2 {
		return readUsageV2(g.LeafDir("", appID, leaf))
	}
	cpuDir := ""
	if _, ok := g.Roots["cpuacct"]; ok {
		cpuDir = g.LeafDir("cpuacct", appID, leaf)
	} else if _, err := os.Stat(filepath.Join(g.Roots["cpu"], "cpuacct.usage")); err == nil {
		cpuDir = g.LeafDir("cpu", appID, leaf) // cpu and cpuacct mounted together
	}
	return readUsageV1(cpuDir, g.LeafDir("memory", appID, leaf))
}

// readUsageV2 reads a unified-hierarchy group: cpu.stat, memory.current, memory.max.
func readUsageV2(dir string) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return Usage{}, err
	}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(stat))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
			if u.CPUMicros, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return Usage{}, fmt.Errorf("cpu.stat usage_usec: %w", err)
			}
			found = true
		}
	}
	if !found {
		return Usage{}, errors.New("cpu.stat has no usage_usec")
	}
	if u.MemoryBytes, err = readInt(filepath.Join(dir, "memory.current")); err != nil {
		return Usage{}, err
	}
	if u.MemoryLimitBytes, err = readLimit(filepath.Join(dir, "memory.max")); err != nil {
		return Usage{}, err
	}
	return u, nil
}

// readUsageV1 reads a group in the v1 trees: cpuacct.usage (nanoseconds; cpuDir "" when the
// host has no cpuacct), memory.usage_in_bytes and memory.limit_in_bytes.
func readUsageV1(cpuDir, memDir string) (Usage, error) {
	if cpuDir == "" {
		return Usage{}, ErrNoCPUAccounting
	}
	var u Usage
	ns, err := readInt(filepath.Join(cpuDir, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	u.CPUMicros = ns / 1000
	if u.MemoryBytes, err = readInt(filepath.Join(memDir, "memory.usage_in_bytes")); err != nil {
		return Usage{}, err
	}
	if u.MemoryLimitBytes, err = readLimit(filepath.Join(memDir, "memory.limit_in_bytes")); err != nil {
		return Usage{}, err
	}
	return u, nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return n, nil
}

// readLimit reads a memory limit: "max" (v2) or a huge value (v1) is none, 0.
func readLimit(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if n >= unlimited {
		return 0, nil
	}
	return n, nil
}

// Usage reads what the sandbox's group has used: its instance's leaf (made when it
// started, so its CPU time is the instance's since Started), or the builds' leaf.
func (p *Sandboxed) Usage() (Usage, error) {
	select {
	case <-p.done:
		return Usage{}, errors.New("the sandbox has ended")
	default:
	}
	return p.sb.Cgroups.LeafUsage(p.appID, p.leaf)
}

// Instance is the instance the sandbox runs (Spec.Instance: web.1, worker.2, cron.<job>.<run>),
// the name its output carries in the app's log; "" for a build or release Job.
func (p *Sandboxed) Instance() string { return p.instance }

// Started is when the sandbox started.
func (p *Sandboxed) Started() time.Time { return p.started }
