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
	"syscall"
	"time"
)

// cfsPeriod is the CFS period the CPU ceiling is expressed in: a quota of cpu × period.
const cfsPeriod = 100_000

// Limits are what one app's processes may use together.
type Limits struct {
	MemoryBytes int64
	Pids        int64
	CPU         float64 // cores; 0 leaves the CPU unbounded
}

// Cgroups holds each app's processes in a control group of its own: memory (a process over
// it is killed by the kernel), processes (a fork bomb stops at the limit) and the plan's CPU
// ceiling. Both hierarchies are implemented: v2 (one tree, memory.max, pids.max, cpu.max,
// cgroup.kill) and v1 (one tree per controller, as on this project's CI host).
type Cgroups struct {
	// V2 selects the unified hierarchy; Root is then the zone's folder in it. For v1,
	// Roots holds the zone's folder in each controller's tree.
	V2    bool
	Root  string
	Roots map[string]string // v1: "memory", "pids", "cpu" → <mount>/tori-<zone>
}

// v1Controllers are the v1 hierarchies an app joins.
var v1Controllers = []string{"memory", "pids", "cpu"}

// DetectCgroups makes the zone's folder under mount (normally /sys/fs/cgroup) in whichever
// hierarchy the host has, or says why it cannot.
func DetectCgroups(mount, zone string) (*Cgroups, error) {
	name := "tori-" + zone
	if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err == nil {
		g := &Cgroups{V2: true, Root: filepath.Join(mount, name)}
		// Controllers must be enabled from the top down for the app folders to get them.
		for _, dir := range []string{mount, g.Root} {
			if dir == g.Root {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, fmt.Errorf("cgroup v2: %w", err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0o644); err != nil {
				return nil, fmt.Errorf("cgroup v2: enabling memory, pids and cpu under %s: %w", dir, err)
			}
		}
		return g, nil
	}
	g := &Cgroups{Roots: map[string]string{}}
	for _, c := range v1Controllers {
		root := filepath.Join(mount, c, name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v1 %s: %w", c, err)
		}
		g.Roots[c] = root
	}
	return g, nil
}

// dirs are the app's folders: one in v2, one per controller in v1.
func (g *Cgroups) dirs(appID string) map[string]string {
	if g.V2 {
		return map[string]string{"": filepath.Join(g.Root, appID)}
	}
	out := map[string]string{}
	for c, root := range g.Roots {
		out[c] = filepath.Join(root, appID)
	}
	return out
}

// Dir is the app's group folder in controller's tree (v1), or in the unified tree (v2).
func (g *Cgroups) Dir(controller, appID string) string {
	if g.V2 {
		return filepath.Join(g.Root, appID)
	}
	return filepath.Join(g.Roots[controller], appID)
}

// Setup creates the app's group and writes its limits; it is idempotent, so every start
// rewrites the limits (the plan's CPU may have changed).
func (g *Cgroups) Setup(appID string, lim Limits) error {
	for _, d := range g.dirs(appID) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	quota := "max"
	if lim.CPU > 0 {
		quota = strconv.Itoa(max(int(lim.CPU*cfsPeriod), 1000)) // the kernel's minimum is 1 ms
	}
	var files [][3]string // controller, file, value
	if g.V2 {
		files = [][3]string{
			{"", "memory.max", strconv.FormatInt(lim.MemoryBytes, 10)},
			{"", "memory.swap.max", "0"},
			{"", "pids.max", strconv.FormatInt(lim.Pids, 10)},
			{"", "cpu.max", quota + " " + strconv.Itoa(cfsPeriod)},
		}
	} else {
		v1quota := quota
		if v1quota == "max" {
			v1quota = "-1"
		}
		files = [][3]string{
			{"memory", "memory.limit_in_bytes", strconv.FormatInt(lim.MemoryBytes, 10)},
			{"pids", "pids.max", strconv.FormatInt(lim.Pids, 10)},
			{"cpu", "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)},
			{"cpu", "cpu.cfs_quota_us", v1quota},
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(g.Dir(f[0], appID), f[1]), []byte(f[2]), 0o644); err != nil {
			if f[1] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
				continue // a kernel without swap accounting has no such file
			}
			return fmt.Errorf("cgroup %s: %w", f[1], err)
		}
	}
	if !g.V2 {
		// Swap would let a process exceed its memory unseen; v1 bounds memory+swap in a
		// file that exists only with swap accounting.
		p := filepath.Join(g.Dir("memory", appID), "memory.memsw.limit_in_bytes")
		if _, err := os.Stat(p); err == nil {
			_ = os.WriteFile(p, []byte(strconv.FormatInt(lim.MemoryBytes, 10)), 0o644)
		}
	}
	return nil
}

// Add moves pid into the app's group; processes it starts afterwards are born there.
func (g *Cgroups) Add(appID string, pid int) error {
	for _, d := range g.dirs(appID) {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup join: %w", err)
		}
	}
	return nil
}

// Pids lists the processes in the app's group.
func (g *Cgroups) Pids(appID string) []int {
	b, err := os.ReadFile(filepath.Join(g.Dir("pids", appID), "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Kill ends every process of the app: cgroup.kill on v2; on v1, SIGKILL to each member
// until the group is empty (a fork bomb may add members while they are killed; the pids
// limit bounds how many).
func (g *Cgroups) Kill(appID string) {
	if g.V2 {
		if err := os.WriteFile(filepath.Join(g.Dir("", appID), "cgroup.kill"), []byte("1"), 0o644); err == nil {
			return
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids := g.Pids(appID)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OOMKills is how many of the app's processes the kernel killed for exceeding its memory.
func (g *Cgroups) OOMKills(appID string) int64 {
	file := "memory.oom_control" // v1: "oom_kill N" since Linux 4.13
	if g.V2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(g.Dir("memory", appID), file))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// Remove kills what is left of the app and deletes its group.
func (g *Cgroups) Remove(appID string) {
	g.Kill(appID)
	for _, d := range g.dirs(appID) {
		for i := 0; i < 50; i++ { // a killed process leaves the group a moment later
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
