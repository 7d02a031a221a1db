package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// readFile is a file's content, trimmed; "" when it does not exist.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// fakeCgroup2 is a temporary directory laid out like a cgroup v2 mount: the files the
// runner reads or writes exist, as the kernel would show them, and are plain files.
func fakeCgroup2(t *testing.T) string {
	t.Helper()
	mount := t.TempDir()
	for name, body := range map[string]string{
		"cgroup.controllers":     "cpuset cpu io memory hugetlb pids rdma misc",
		"cgroup.subtree_control": "",
		"cgroup.procs":           "1",
	} {
		if err := os.WriteFile(filepath.Join(mount, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mount
}

// On a unified (v2) hierarchy the zone enables memory, pids and cpu from the top down; each
// app's group gets its totals (memory.max, no swap, pids.max, no CPU ceiling of its own) and
// hands the controllers down to its leaves, which get the plan's cpu.max and, for an
// instance, its memory.max; the limits are rewritten on each start, and joining a leaf
// writes the pid to the leaf's cgroup.procs.
func TestCgroupV2WritesLimits(t *testing.T) {
	mount := fakeCgroup2(t)
	g, err := DetectCgroups(mount, "z1")
	if err != nil {
		t.Fatal(err)
	}
	if !g.V2 || g.Root != filepath.Join(mount, "tori-z1") {
		t.Fatalf("detected %+v, want v2 rooted at tori-z1", g)
	}
	for _, dir := range []string{mount, g.Root} {
		if got := readFile(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+memory +pids +cpu" {
			t.Errorf("%s/cgroup.subtree_control = %q", dir, got)
		}
	}
	app := filepath.Join(g.Root, "app-1")
	// memory.swap.max exists on a kernel with swap accounting: it must be written too.
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "memory.swap.max"), []byte("max"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Setup("app-1", Limits{MemoryBytes: 1 << 30, Pids: 512}); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"memory.max": "1073741824", "memory.swap.max": "0", "pids.max": "512",
		"cpu.max": "max 100000", "cgroup.subtree_control": "+memory +pids +cpu"} {
		if got := readFile(t, filepath.Join(app, file)); got != want {
			t.Errorf("the app's %s = %q, want %q", file, got, want)
		}
	}

	for _, tc := range []struct {
		name, leaf string
		lim        Limits
		want       map[string]string
	}{
		{"an instance: half a core, its own memory", "web.1", Limits{MemoryBytes: 256 << 20, CPU: 0.5},
			map[string]string{"memory.max": "268435456", "pids.max": "max", "cpu.max": "50000 100000"}},
		{"the same instance, two cores", "web.1", Limits{MemoryBytes: 512 << 20, CPU: 2},
			map[string]string{"memory.max": "536870912", "cpu.max": "200000 100000"}},
		{"below the kernel's 1 ms minimum", "worker.1", Limits{MemoryBytes: 1 << 20, CPU: 0.001},
			map[string]string{"cpu.max": "1000 100000"}},
		{"builds: the app's memory, no ceiling", BuildLeaf, Limits{},
			map[string]string{"memory.max": "max", "pids.max": "max", "cpu.max": "max 100000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := g.SetupLeaf("app-1", tc.leaf, tc.lim); err != nil {
				t.Fatal(err)
			}
			for file, want := range tc.want {
				if got := readFile(t, filepath.Join(app, tc.leaf, file)); got != want {
					t.Errorf("%s/%s = %q, want %q", tc.leaf, file, got, want)
				}
			}
			// v1's files are never written on v2.
			for _, v1 := range []string{"memory.limit_in_bytes", "cpu.cfs_quota_us"} {
				if _, err := os.Stat(filepath.Join(app, tc.leaf, v1)); err == nil {
					t.Errorf("%s written on a v2 hierarchy", v1)
				}
			}
		})
	}

	if err := g.Add("app-1", "", 4242); err == nil {
		t.Error("a process joined the app's group itself, which v2 refuses once its leaves have controllers")
	}
	if err := g.Add("app-1", "web.1", 4242); err != nil {
		t.Fatal(err)
	}
	if err := g.Add("app-1", BuildLeaf, 4343); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(app, "web.1", "cgroup.procs")); got != "4242" {
		t.Errorf("web.1/cgroup.procs = %q, want the joined pid", got)
	}
	if got := g.Pids("app-1"); len(got) != 2 || !slices.Contains(got, 4242) || !slices.Contains(got, 4343) {
		t.Errorf("Pids = %v, want every leaf's", got)
	}
	// The app's memory.events counts its whole subtree on v2; a leaf's, its own.
	os.WriteFile(filepath.Join(app, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n"), 0o644)
	os.WriteFile(filepath.Join(app, "web.1", "memory.events"), []byte("oom 1\noom_kill 1\n"), 0o644)
	if n := g.OOMKills("app-1"); n != 2 {
		t.Errorf("OOMKills = %d, want memory.events' oom_kill 2", n)
	}
	if n := g.LeafOOMKills("app-1", "web.1"); n != 1 {
		t.Errorf("LeafOOMKills = %d, want web.1's 1", n)
	}
}

// On v2 stopping an app is one write of 1 to cgroup.kill: the kernel kills every member at
// once, fork bomb or not. The runner must not fall back to signalling members one by one
// (here a real process listed in the fake group survives, which proves it was not signalled).
func TestCgroupV2KillsThroughCgroupKill(t *testing.T) {
	g := &Cgroups{V2: true, Root: filepath.Join(t.TempDir(), "tori-z1")}
	if err := g.Setup("app-1", Limits{MemoryBytes: 1 << 20, Pids: 8}); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(g.Root, "app-1")
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	if err := g.Add("app-1", "web.1", sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "cgroup.kill"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	g.Kill("app-1")
	if got := readFile(t, filepath.Join(app, "cgroup.kill")); got != "1" {
		t.Fatalf("cgroup.kill = %q, want 1", got)
	}
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the member was signalled one by one instead of through cgroup.kill: %v", err)
	}

	// Where cgroup.kill cannot be written (a kernel before 5.14 has none), the members are
	// killed one by one until the group is empty.
	old := &Cgroups{V2: true, Root: filepath.Join(t.TempDir(), "tori-z1")}
	if err := old.Setup("app-1", Limits{MemoryBytes: 1 << 20, Pids: 8}); err != nil {
		t.Fatal(err)
	}
	oldApp := filepath.Join(old.Root, "app-1")
	os.Mkdir(filepath.Join(oldApp, "cgroup.kill"), 0o755) // unwritable, as if absent
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	pid := victim.Process.Pid
	done := make(chan error, 1)
	go func() {
		err := victim.Wait()
		// The kernel would drop the dead member; the fake file must be emptied by hand.
		os.WriteFile(filepath.Join(oldApp, "worker.2", "cgroup.procs"), nil, 0o644)
		done <- err
	}()
	old.Add("app-1", "worker.2", pid)
	old.Kill("app-1")
	if err := <-done; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("member %s ended with %v, want killed", strconv.Itoa(pid), err)
	}
}
