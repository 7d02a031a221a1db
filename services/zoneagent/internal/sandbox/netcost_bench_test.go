package sandbox

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// pss is the proportional set size of pid in bytes (smaps_rollup): its share of the pages it
// maps, so the pages of bwrap, sleep and pasta's binaries shared by every app count once
// across them, where RSS would count them in each.
func pss(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// descendants lists pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if _, rest, ok := strings.Cut(string(stat), ") "); ok {
			if f := strings.Fields(rest); len(f) > 1 {
				ppid, _ := strconv.Atoi(f[1])
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// networkProcs are the processes an app's kept network runs: the holder's (bwrap, the
// namespace's first process, sleep) and pasta.
func networkProcs(sb Sandbox, appID string) []int {
	sb.ids.netMu.Lock()
	var n *appNet
	if sl := sb.ids.nets[appID]; sl != nil {
		n = sl.net
	}
	sb.ids.netMu.Unlock()
	if n == nil {
		return nil
	}
	return append(descendants(n.holder.Process.Pid), n.pastaPID)
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// BenchmarkNetworkMemory prints what a kept network (holder and pasta) costs per app.
//
//	go test -run '^$' -bench BenchmarkNetworkMemory -benchtime 1x ./internal/sandbox/
func BenchmarkNetworkMemory(b *testing.B) {
	t := &testing.T{}
	sb := testSandbox(t)
	apps := 20
	if v, err := strconv.Atoi(os.Getenv("NET_MEMORY_APPS")); err == nil && v > 0 {
		apps = v
	}
	ctx := context.Background()
	var ids []string
	b.Cleanup(func() {
		for _, id := range ids {
			sb.ReleaseNetwork(id)
			sb.Cgroups.Remove(id)
			sb.ForgetUID(id)
		}
	})
	runtime.GC()
	fds0, gor0 := openFDs(), runtime.NumGoroutine()
	var total time.Duration
	for i := 0; i < apps; i++ {
		id := uuid.NewString()
		sb.SetUID(id, uint32(testUIDBase+500+i))
		ids = append(ids, id)
		t0 := time.Now()
		if _, err := sb.Network(ctx, id); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
	}
	time.Sleep(time.Second)
	var pssSum, leafSum int64
	procs := 0
	for i, id := range ids {
		var appPSS int64
		pids := networkProcs(sb, id)
		for _, pid := range pids {
			appPSS += pss(pid)
		}
		procs += len(pids)
		pssSum += appPSS
		if u, err := sb.Cgroups.LeafUsage(id, NetLeaf); err == nil {
			leafSum += u.MemoryBytes
		}
		if i == 0 {
			b.Logf("one app: %d processes, PSS %d KB", len(pids), appPSS>>10)
			for _, pid := range pids {
				comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
				b.Logf("  pid %d %s PSS %d KB", pid, strings.TrimSpace(string(comm)), pss(pid)>>10)
			}
		}
	}
	runtime.GC()
	n := int64(apps)
	b.Logf("%d apps: network made in %v each; per app: %d processes, PSS %d KB, net leaf's charge %d KB; agent +%d fds, +%d goroutines",
		apps, total/time.Duration(apps), procs/apps, pssSum/n>>10, leafSum/n>>10, (openFDs()-fds0)/apps, (runtime.NumGoroutine()-gor0)/apps)
	b.ReportMetric(float64(pssSum/n)/1024, "PSS-KB/app")

	// Napped: each network released, as a nap does; what is left per app is what napping
	// costs on the host (the app's empty cgroup folders stay for its next start).
	for _, id := range ids {
		if !sb.ReleaseIdleNetwork(id) {
			b.Fatalf("app %s's network not released", id)
		}
	}
	time.Sleep(time.Second)
	runtime.GC()
	procs, leafSum = 0, 0
	for _, id := range ids {
		procs += len(networkProcs(sb, id)) + len(procsIn(sb.Cgroups.LeafDir("memory", id, NetLeaf)))
		if u, err := sb.Cgroups.LeafUsage(id, NetLeaf); err == nil {
			leafSum += u.MemoryBytes
		}
	}
	b.Logf("%d apps napped: per app %d processes left, net leaf's charge %d KB; agent +%d fds, +%d goroutines in all",
		apps, procs/apps, leafSum/n>>10, openFDs()-fds0, runtime.NumGoroutine()-gor0)
	if procs > 0 {
		b.Fatalf("napped apps keep %d processes", procs)
	}
}

// BenchmarkStartAfterNap prints what releasing the network at a nap adds to the next start
// (a wake): a sandbox run to its end with the app's network kept, against the same right
// after ReleaseIdleNetwork, interleaved so that the host's load weighs on both alike.
//
//	go test -run '^$' -bench BenchmarkStartAfterNap -benchtime 20x ./internal/sandbox/
func BenchmarkStartAfterNap(b *testing.B) {
	t := &testing.T{}
	sb, app, dir := instanceApp(t, testUIDBase+985)
	b.Cleanup(func() { sb.ForgetUID(app); sb.Cgroups.Remove(app); sb.ReleaseNetwork(app); os.RemoveAll(dir) })
	start := func() time.Duration {
		t0 := time.Now()
		p, err := sb.Start(context.Background(), Spec{AppID: app, Dir: dir, Argv: []string{"/bin/true"}, Env: Environ(nil, 0), Instance: "web.1"})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	start() // the network is made once before either is timed
	var kept, released []time.Duration
	for i := 0; i < b.N; i++ {
		kept = append(kept, start())
		if !sb.ReleaseIdleNetwork(app) {
			b.Fatal("the network was not released")
		}
		released = append(released, start())
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	k, r := median(kept), median(released)
	b.ReportMetric(float64(r-k)/1e6, "ms-added-per-wake")
	b.Logf("start with the network kept: median %v; after a nap's release: median %v; a wake pays %v more", k, r, r-k)
}
