package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cfsPeriod is the CFS period the CPU ceiling is expressed in: a quota of cpu × period.
const cfsPeriod = 100_000

// Limits are what the processes of one group may use together. In a leaf (SetupLeaf) a
// zero leaves that resource to the app's total.
type Limits struct {
	MemoryBytes int64
	Pids        int64
	CPU         float64 // cores; 0 leaves the CPU unbounded
}

// The leaves of an app's group that are no instance. An instance's name always has a dot
// (web.1, cron.<job>.<run>), so neither can be one.
const (
	// BuildLeaf holds an app's sandboxes without an instance: builds and release Jobs.
	BuildLeaf = "build"
	// NetLeaf holds the app's network namespace's holder and its pasta.
	NetLeaf = "net"
)

// instanceName is what Spec.Instance may be: a process type, a dot, and the rest of its name
// (an instance number, or a cron job and run id). It names a folder, so no slash, no "..",
// and no underscore (a second leaf of the same instance is <instance>_<n>).
var instanceName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,29}(\.[a-z0-9-]{1,64}){1,2}$`)

// ValidInstance reports whether name may name an instance's group.
func ValidInstance(name string) bool { return instanceName.MatchString(name) }

// Cgroups holds each app's processes in a control group of its own, the app's total:
// memory (a process over it is killed by the kernel) and processes (a fork bomb stops at
// the limit). Processes live only in its leaves (cgroup v2 allows no process in a group
// whose controllers its children use): one per instance (<app>/<instance>, with the plan's
// per-instance memory and CPU), BuildLeaf for builds and release Jobs (the plan's CPU) and
// NetLeaf for the network. Both hierarchies are implemented, the same way: v2 (one tree,
// memory.max, pids.max, cpu.max, cgroup.kill) and v1 (one tree per controller, as on this
// project's CI host).
type Cgroups struct {
	// V2 selects the unified hierarchy; Root is then the zone's folder in it. For v1,
	// Roots holds the zone's folder in each controller's tree.
	V2    bool
	Root  string
	Roots map[string]string // v1: "memory", "pids", "cpu" (and "cpuacct" when apart) → <mount>/tori-<zone>

	mu sync.Mutex
	// held counts the live sandboxes of each instance leaf (appID/leaf): a second sandbox
	// of the same instance (a new revision's web.1 while the old one still serves) gets a
	// leaf of its own.
	held map[string]int
	// goneOOM (v1) is each app's memory kills counted in leaves removed since: v1 counts a
	// kill only in the group whose limit was hit, and a removed leaf takes its count along.
	goneOOM map[string]int64
}

// v1Controllers are the v1 hierarchies an app joins.
var v1Controllers = []string{"memory", "pids", "cpu"}

// subtreeControllers are the controllers a group hands down to its children (v2).
const subtreeControllers = "+memory +pids +cpu"

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
			if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(subtreeControllers), 0o644); err != nil {
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
	// cpuacct counts each group's CPU time, which the customer's metrics report (usage.go).
	// Mounted together with cpu (cpu,cpuacct) the cpu tree has it already; mounted apart it
	// is joined as a tree of its own; a host without it reports no CPU time.
	if _, err := os.Stat(filepath.Join(mount, "cpu", "cpuacct.usage")); err != nil {
		if _, err := os.Stat(filepath.Join(mount, "cpuacct", "cpuacct.usage")); err == nil {
			root := filepath.Join(mount, "cpuacct", name)
			if err := os.MkdirAll(root, 0o755); err == nil {
				g.Roots["cpuacct"] = root
			}
		}
	}
	return g, nil
}

// dirs are the folders of the app's group (leaf "") or of one of its leaves: one in v2, one
// per controller in v1.
func (g *Cgroups) dirs(appID, leaf string) map[string]string {
	if g.V2 {
		return map[string]string{"": filepath.Join(g.Root, appID, leaf)}
	}
	out := map[string]string{}
	for c, root := range g.Roots {
		out[c] = filepath.Join(root, appID, leaf)
	}
	return out
}

// Dir is the app's group folder in controller's tree (v1), or in the unified tree (v2).
func (g *Cgroups) Dir(controller, appID string) string { return g.LeafDir(controller, appID, "") }

// LeafDir is the folder of one leaf of the app's group (leaf "": the group itself).
func (g *Cgroups) LeafDir(controller, appID, leaf string) string {
	if g.V2 {
		return filepath.Join(g.Root, appID, leaf)
	}
	return filepath.Join(g.Roots[controller], appID, leaf)
}

// Setup creates the app's group and writes its totals; it is idempotent, so every start
// rewrites them. On v2 it hands the controllers down to the leaves.
func (g *Cgroups) Setup(appID string, lim Limits) error {
	if err := g.write(appID, "", lim); err != nil {
		return err
	}
	if g.V2 {
		if err := os.WriteFile(filepath.Join(g.Dir("", appID), "cgroup.subtree_control"), []byte(subtreeControllers), 0o644); err != nil {
			return fmt.Errorf("cgroup v2: enabling memory, pids and cpu for the app's leaves: %w", err)
		}
	}
	return nil
}

// SetupLeaf creates one leaf of the app's group (Setup first) and writes its limits, a zero
// leaving the resource to the app's total; every start rewrites them.
func (g *Cgroups) SetupLeaf(appID, leaf string, lim Limits) error {
	if leaf == "" {
		return errors.New("cgroup: a leaf needs a name")
	}
	return g.write(appID, leaf, lim)
}

// write creates a group's folders and writes lim to them.
func (g *Cgroups) write(appID, leaf string, lim Limits) error {
	for _, d := range g.dirs(appID, leaf) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	quota := "max"
	if lim.CPU > 0 {
		quota = strconv.Itoa(max(int(lim.CPU*cfsPeriod), 1000)) // the kernel's minimum is 1 ms
	}
	memory, pids := "max", "max"
	if lim.MemoryBytes > 0 {
		memory = strconv.FormatInt(lim.MemoryBytes, 10)
	}
	if lim.Pids > 0 {
		pids = strconv.FormatInt(lim.Pids, 10)
	}
	var files [][3]string // controller, file, value
	if g.V2 {
		files = [][3]string{
			{"", "memory.max", memory},
			{"", "memory.swap.max", "0"},
			{"", "pids.max", pids},
			{"", "cpu.max", quota + " " + strconv.Itoa(cfsPeriod)},
		}
	} else {
		v1 := func(s string) string {
			if s == "max" {
				return "-1"
			}
			return s
		}
		// Swap would let a process exceed its memory unseen; v1 bounds memory+swap in a
		// file that exists only with swap accounting, and refuses a memory limit above it:
		// it is lifted first and set to the memory limit after.
		memsw := filepath.Join(g.LeafDir("memory", appID, leaf), "memory.memsw.limit_in_bytes")
		if _, err := os.Stat(memsw); err == nil {
			_ = os.WriteFile(memsw, []byte("-1"), 0o644)
			defer os.WriteFile(memsw, []byte(v1(memory)), 0o644)
		}
		files = [][3]string{
			{"memory", "memory.limit_in_bytes", v1(memory)},
			{"pids", "pids.max", pids},
			{"cpu", "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)},
			{"cpu", "cpu.cfs_quota_us", v1(quota)},
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(g.LeafDir(f[0], appID, leaf), f[1]), []byte(f[2]), 0o644); err != nil {
			if f[1] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
				continue // a kernel without swap accounting has no such file
			}
			return fmt.Errorf("cgroup %s: %w", f[1], err)
		}
	}
	return nil
}

// Add moves pid into one leaf of the app's group (made if missing, with no limit of its
// own); processes it starts afterwards are born there.
func (g *Cgroups) Add(appID, leaf string, pid int) error {
	if leaf == "" {
		return errors.New("cgroup: processes join a leaf, never the app's group itself")
	}
	for _, d := range g.dirs(appID, leaf) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgroup join: %w", err)
		}
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup join: %w", err)
		}
	}
	return nil
}

// groups lists dir and every group below it, deepest first (the order they are removed in).
func groups(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	slices.Reverse(out)
	return out
}

// procsIn lists the processes directly in one group folder.
func procsIn(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
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

// Pids lists the processes of the app: in every one of its leaves (and in the group itself,
// where an agent before leaves put them).
func (g *Cgroups) Pids(appID string) []int {
	var out []int
	for _, d := range groups(g.Dir("pids", appID)) {
		out = append(out, procsIn(d)...)
	}
	return out
}

// Kill ends every process of the app, every instance's among them: cgroup.kill on v2 (it
// kills the whole subtree); on v1, SIGKILL to each member until the group is empty (a fork
// bomb may add members while they are killed; the pids limit bounds how many).
func (g *Cgroups) Kill(appID string) {
	g.killGroup(g.Dir("", appID), func() []int { return g.Pids(appID) })
}

// KillInstance ends every process of one instance of the app (each of its leaves: a
// second sandbox of the same instance has a leaf of its own), and nothing else of the app.
func (g *Cgroups) KillInstance(appID, instance string) {
	if !ValidInstance(instance) {
		return
	}
	for _, leaf := range g.instanceLeaves(appID, instance) {
		g.killLeaf(appID, leaf)
	}
}

// instanceLeaves are the leaves of instance found in the app's group: <instance> and
// <instance>_<n>.
func (g *Cgroups) instanceLeaves(appID, instance string) []string {
	entries, err := os.ReadDir(g.Dir("pids", appID))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && (e.Name() == instance || strings.HasPrefix(e.Name(), instance+"_")) {
			out = append(out, e.Name())
		}
	}
	return out
}

// killLeaf ends every process of one leaf.
func (g *Cgroups) killLeaf(appID, leaf string) {
	g.killGroup(g.LeafDir("", appID, leaf), func() []int {
		var out []int
		for _, d := range groups(g.LeafDir("pids", appID, leaf)) {
			out = append(out, procsIn(d)...)
		}
		return out
	})
}

// killGroup writes cgroup.kill in dir on v2; where it cannot (v1, or a kernel before 5.14),
// it signals members until none is left.
func (g *Cgroups) killGroup(dir string, members func() []int) {
	if g.V2 {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644); err == nil {
			return
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids := members()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OOMKills is how many of the app's processes the kernel killed for exceeding a memory
// limit: the app's total or an instance's. On v2 the app's memory.events counts its whole
// subtree; on v1 each group counts its own, so they are added up (with those of leaves
// removed since).
func (g *Cgroups) OOMKills(appID string) int64 {
	if g.V2 {
		return oomKillsIn(g.Dir("memory", appID), true)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.goneOOM[appID]
	for _, d := range groups(g.Dir("memory", appID)) {
		n += oomKillsIn(d, false)
	}
	return n
}

// LeafOOMKills is how many processes of one leaf the kernel killed for its memory.
func (g *Cgroups) LeafOOMKills(appID, leaf string) int64 {
	return oomKillsIn(g.LeafDir("memory", appID, leaf), g.V2)
}

// oomKillsIn reads the oom_kill count of one group folder.
func oomKillsIn(dir string, v2 bool) int64 {
	file := "memory.oom_control" // v1: "oom_kill N" since Linux 4.13
	if v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
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

// claimInstance picks the leaf a new sandbox of instance runs in: <instance>, or, while
// another sandbox holds it, <instance>_2, _3…; releaseLeaf gives it back.
func (g *Cgroups) claimInstance(appID, instance string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == nil {
		g.held = map[string]int{}
	}
	leaf := instance
	for n := 2; g.held[appID+"/"+leaf] > 0; n++ {
		leaf = instance + "_" + strconv.Itoa(n)
	}
	g.held[appID+"/"+leaf]++
	return leaf
}

// releaseLeaf ends what is left in an instance's leaf once its sandbox has ended, removes
// the leaf, and returns its count of memory kills (read before it goes).
func (g *Cgroups) releaseLeaf(appID, leaf string) int64 {
	g.killLeaf(appID, leaf)
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.LeafOOMKills(appID, leaf)
	if removeGroups(g.dirs(appID, leaf)) && !g.V2 {
		if g.goneOOM == nil {
			g.goneOOM = map[string]int64{}
		}
		g.goneOOM[appID] += n
	}
	if g.held[appID+"/"+leaf]--; g.held[appID+"/"+leaf] <= 0 {
		delete(g.held, appID+"/"+leaf)
	}
	return n
}

// removeGroups removes each folder and the groups below it, deepest first; a killed
// process leaves its group a moment later, so each removal is retried a little. It
// reports whether every one is gone.
func removeGroups(dirs map[string]string) bool {
	gone := true
	for _, top := range dirs {
		for _, d := range groups(top) {
			removed := false
			for i := 0; i < 50; i++ {
				if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
					removed = true
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			gone = gone && removed
		}
	}
	return gone
}

// Remove kills what is left of the app and deletes its group, its leaves first.
func (g *Cgroups) Remove(appID string) {
	g.Kill(appID)
	g.mu.Lock()
	defer g.mu.Unlock()
	removeGroups(g.dirs(appID, ""))
	delete(g.goneOOM, appID)
	for k := range g.held {
		if strings.HasPrefix(k, appID+"/") {
			delete(g.held, k)
		}
	}
}
