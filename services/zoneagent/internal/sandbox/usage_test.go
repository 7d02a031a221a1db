package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeTree writes files (relative path → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A leaf's usage is read from the unified tree's cpu.stat (usage_usec), memory.current and
// memory.max ("max": no limit), as the kernel writes them.
func TestLeafUsageV2FromAFakeTree(t *testing.T) {
	root := t.TempDir()
	g := &Cgroups{V2: true, Root: root}
	writeTree(t, root, map[string]string{
		"app1/web.1/cpu.stat":          "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n",
		"app1/web.1/memory.current":    "73400320\n",
		"app1/web.1/memory.max":        "268435456\n",
		"app1/worker.1/cpu.stat":       "usage_usec 10\n",
		"app1/worker.1/memory.current": "4096\n",
		"app1/worker.1/memory.max":     "max\n",
	})
	u, err := g.LeafUsage("app1", "web.1")
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{CPUMicros: 2_500_000, MemoryBytes: 73400320, MemoryLimitBytes: 256 << 20}) {
		t.Fatalf("web.1 usage %+v", u)
	}
	u, err = g.LeafUsage("app1", "worker.1")
	if err != nil || u != (Usage{CPUMicros: 10, MemoryBytes: 4096}) {
		t.Fatalf("worker.1 usage %+v, %v (no limit reads as 0)", u, err)
	}
	if _, err := g.LeafUsage("app1", "web.2"); err == nil {
		t.Fatal("a missing leaf read without an error")
	}
	writeTree(t, root, map[string]string{"app1/bad.1/cpu.stat": "user_usec 1\n", "app1/bad.1/memory.current": "1", "app1/bad.1/memory.max": "max"})
	if _, err := g.LeafUsage("app1", "bad.1"); err == nil {
		t.Fatal("cpu.stat without usage_usec read without an error")
	}
}

// On v1 the CPU time comes from cpuacct.usage (nanoseconds), in its own tree or the cpu
// tree it shares, and v1's "no limit" (the largest page-aligned value) reads as none.
func TestLeafUsageV1FromAFakeTree(t *testing.T) {
	mem, cpu, acct := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, mem, map[string]string{
		"app1/web.1/memory.usage_in_bytes": "1048576\n",
		"app1/web.1/memory.limit_in_bytes": "9223372036854771712\n",
	})
	writeTree(t, acct, map[string]string{"app1/web.1/cpuacct.usage": "3000000000\n"})
	g := &Cgroups{Roots: map[string]string{"memory": mem, "cpu": cpu, "pids": t.TempDir(), "cpuacct": acct}}
	u, err := g.LeafUsage("app1", "web.1")
	if err != nil || u != (Usage{CPUMicros: 3_000_000, MemoryBytes: 1 << 20}) {
		t.Fatalf("usage %+v, %v", u, err)
	}
	// cpu,cpuacct mounted together: the cpu tree has cpuacct.usage.
	writeTree(t, cpu, map[string]string{"cpuacct.usage": "0\n", "app1/web.1/cpuacct.usage": "5000\n"})
	delete(g.Roots, "cpuacct")
	if u, err := g.LeafUsage("app1", "web.1"); err != nil || u.CPUMicros != 5 {
		t.Fatalf("usage from the shared cpu tree %+v, %v", u, err)
	}
	// No cpuacct at all: said so, not a zero.
	g.Roots["cpu"] = t.TempDir()
	if _, err := g.LeafUsage("app1", "web.1"); !errors.Is(err, ErrNoCPUAccounting) {
		t.Fatalf("without cpuacct: %v", err)
	}
}

// A real instance's usage: its leaf's memory limit is the instance's, its memory in use is
// above zero, and a busy loop's CPU time grows.
func TestRealInstanceUsage(t *testing.T) {
	sb, app, dir := instanceApp(t, testUIDBase+983)
	p := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1", MemoryBytes: 96 << 20},
		"echo ready; while :; do :; done")
	if p.Instance() != "web.1" || p.Started().IsZero() {
		t.Fatalf("instance %q started %v", p.Instance(), p.Started())
	}
	first, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	second, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if second.CPUMicros <= first.CPUMicros {
		t.Fatalf("CPU time did not grow under a busy loop: %d then %d µs", first.CPUMicros, second.CPUMicros)
	}
	if second.MemoryBytes <= 0 || second.MemoryLimitBytes != 96<<20 {
		t.Fatalf("memory %d of limit %d, want some of %d", second.MemoryBytes, second.MemoryLimitBytes, 96<<20)
	}
	p.Kill()
	<-p.Done()
	if _, err := p.Usage(); err == nil {
		t.Fatal("an ended sandbox's usage read without an error")
	}
}
