package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// instanceApp is an app of the real sandbox with a tree to run in, removed with the test.
func instanceApp(t *testing.T, uid uint32) (Sandbox, string, string) {
	t.Helper()
	sb := testSandbox(t)
	app := uuid.NewString()
	sb.SetUID(app, uid)
	t.Cleanup(func() { sb.ForgetUID(app); sb.Cgroups.Remove(app); sb.ReleaseNetwork(app) })
	dir, err := os.MkdirTemp("", "tori-instances-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return sb, app, dir
}

// startReady starts spec's script and waits until it printed ready.
func startReady(t *testing.T, sb Sandbox, spec Spec, script string) *Sandboxed {
	t.Helper()
	var out syncBuffer
	spec.Argv, spec.Env, spec.Stdout, spec.Stderr = []string{"/bin/sh", "-c", script}, Environ(nil, 0), &out, &out
	p, err := sb.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("%s never said ready: %s", spec.Instance, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// memoryLimit is a group's memory limit as the kernel shows it.
func memoryLimit(t *testing.T, g *Cgroups, app, leaf string) string {
	t.Helper()
	file := "memory.limit_in_bytes"
	if g.V2 {
		file = "memory.max"
	}
	return readFile(t, filepath.Join(g.LeafDir("memory", app, leaf), file))
}

// ended reports whether p ends within a few seconds.
func ended(p *Sandboxed) bool {
	select {
	case <-p.Done():
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// Each instance runs in a group of its own under the app's, with its own memory limit (the
// plan's, else the zone's per-app one) and the plan's CPU, while the app's group keeps the
// total; builds run in a leaf of their own. Pids and Kill cover every instance, KillInstance
// only one; a second sandbox of an instance gets a leaf of its own, and an ended instance's
// leaf goes.
func TestInstancesGetGroupsOfTheirOwn(t *testing.T) {
	sb, app, dir := instanceApp(t, testUIDBase+980)
	g := sb.Cgroups
	const sleep = "echo ready; exec sleep 60"
	web := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1", MemoryBytes: 64 << 20, CPU: 0.5}, sleep)
	worker := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "worker.1", CPU: 0.25}, sleep)
	build := startReady(t, sb, Spec{AppID: app, Dir: dir, CPU: 1}, sleep)

	for _, c := range []struct {
		p        *Sandboxed
		leaf     string
		memory   int64
		cpuQuota string
	}{{web, "web.1", 64 << 20, "50000"}, {worker, "worker.1", sb.MemoryBytes, "25000"}, {build, BuildLeaf, 0, "100000"}} {
		if c.p.CgroupLeaf() != c.leaf {
			t.Fatalf("runs in leaf %q, want %q", c.p.CgroupLeaf(), c.leaf)
		}
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", c.p.Pid()))
		if !strings.Contains(string(cg), "tori-"+testZone+"/"+app+"/"+c.leaf+"\n") {
			t.Fatalf("%s's bubblewrap is not in its leaf:\n%s", c.leaf, cg)
		}
		if c.memory > 0 {
			if got := memoryLimit(t, g, app, c.leaf); got != strconv.FormatInt(c.memory, 10) {
				t.Errorf("%s's memory limit = %s, want %d", c.leaf, got, c.memory)
			}
		}
		quota := readFile(t, filepath.Join(g.LeafDir("cpu", app, c.leaf), "cpu.cfs_quota_us"))
		if g.V2 {
			quota, _, _ = strings.Cut(readFile(t, filepath.Join(g.LeafDir("cpu", app, c.leaf), "cpu.max")), " ")
		}
		if quota != c.cpuQuota {
			t.Errorf("%s's CPU quota = %s, want %s", c.leaf, quota, c.cpuQuota)
		}
	}
	// The app's group keeps the totals.
	if got := memoryLimit(t, g, app, ""); got != strconv.FormatInt(sb.MemoryBytes, 10) {
		t.Errorf("the app's memory limit = %s, want the zone's %d", got, sb.MemoryBytes)
	}
	if got := readFile(t, filepath.Join(g.Dir("pids", app), "pids.max")); got != "256" {
		t.Errorf("the app's pids.max = %s, want 256", got)
	}
	pids := g.Pids(app)
	for _, p := range []*Sandboxed{web, worker, build} {
		if !slices.Contains(pids, p.Pid()) {
			t.Fatalf("Pids %v lacks %d (%s)", pids, p.Pid(), p.CgroupLeaf())
		}
	}

	// A new revision's web.1 while the old one still runs: a leaf of its own, same limits.
	web2 := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1", MemoryBytes: 32 << 20}, sleep)
	if web2.CgroupLeaf() != "web.1_2" || memoryLimit(t, g, app, "web.1_2") != strconv.Itoa(32<<20) {
		t.Fatalf("the second web.1 runs in %q with %s", web2.CgroupLeaf(), memoryLimit(t, g, app, "web.1_2"))
	}

	g.KillInstance(app, "web.1")
	if !ended(web) || !ended(web2) {
		t.Fatal("KillInstance left a web.1 running")
	}
	select {
	case <-worker.Done():
		t.Fatal("KillInstance(web.1) ended the worker")
	case <-build.Done():
		t.Fatal("KillInstance(web.1) ended the build")
	case <-time.After(200 * time.Millisecond):
	}
	for _, leaf := range []string{"web.1", "web.1_2"} {
		if _, err := os.Stat(g.LeafDir("memory", app, leaf)); !os.IsNotExist(err) {
			t.Errorf("the ended instance's leaf %s is still there (%v)", leaf, err)
		}
	}

	g.Kill(app)
	if !ended(worker) || !ended(build) {
		t.Fatal("Kill left an instance or a build running")
	}
	if left := g.Pids(app); len(left) != 0 {
		t.Fatalf("processes left after Kill: %v", left)
	}
	g.Remove(app)
	if _, err := os.Stat(g.Dir("memory", app)); !os.IsNotExist(err) {
		t.Fatalf("the app's group outlived Remove (%v)", err)
	}
}

// An instance over its own memory limit is killed by the kernel and says so, though the app's
// total has room; its sibling lives on, and the app's count keeps the kill after the
// instance's leaf is gone.
func TestAnInstanceIsKilledOverItsOwnMemory(t *testing.T) {
	sb, app, dir := instanceApp(t, testUIDBase+981)
	worker := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "worker.1"}, "echo ready; exec sleep 60")
	hog := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1", MemoryBytes: 32 << 20},
		`echo ready; exec python3 -c "b = bytearray(256 << 20); print(len(b))"`)
	if !ended(hog) {
		t.Fatal("the instance over its memory was not killed")
	}
	if !hog.OOMKilled() || hog.OOMKills() < 1 {
		t.Fatalf("the instance's memory kill was not counted: %d (at start %d), ended with %v", hog.OOMKills(), hog.OOMKillsAtStart(), hog.Wait())
	}
	if hog.MemoryBytes() != 32<<20 {
		t.Errorf("the kill is reported over %d bytes, want the instance's 32 MiB", hog.MemoryBytes())
	}
	if worker.OOMKilled() {
		t.Error("the sibling instance counts the other's memory kill")
	}
	select {
	case <-worker.Done():
		t.Fatal("the sibling instance was killed too")
	default:
	}
	if n := sb.Cgroups.OOMKills(app); n < 1 {
		t.Errorf("the app's count of memory kills = %d after the instance's leaf went, want at least 1", n)
	}
}

// An instance name that could leave the app's group (a path, "..") or clash with a leaf of
// its own kind is refused before anything starts, and holds no leaf.
func TestABadInstanceNameIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"web.1", true}, {"worker-2.10", true}, {"cron.nightly.0193f1c2-7a4b-7c3d-8e9f-0a1b2c3d4e5f", true},
		{"web", false}, {"build", false}, {"net", false}, {"../web.1", false}, {"web.1/x", false}, {"web..1", false},
		{"web.1_2", false}, {"Web.1", false}, {"web.1.2.3", false}, {"", false},
	} {
		if ValidInstance(c.name) != c.ok {
			t.Errorf("ValidInstance(%q) = %v, want %v", c.name, !c.ok, c.ok)
		}
	}
	sb, app, dir := instanceApp(t, testUIDBase+982)
	if _, err := sb.Start(context.Background(), Spec{AppID: app, Dir: dir, Instance: "../../escape.1", Argv: []string{"/bin/true"}, Env: Environ(nil, 0)}); err == nil {
		t.Fatal("a sandbox started with an instance name that is a path")
	}
	if _, err := os.Stat(filepath.Join(sb.Cgroups.Dir("memory", app), "..", "..", "escape.1")); !os.IsNotExist(err) {
		t.Fatalf("a group was made outside the app's (%v)", err)
	}
}
