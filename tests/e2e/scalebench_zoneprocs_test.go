package e2e

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// zoneProc is one process the bench counts: its id, parent, real uid, name and memory.
type zoneProc struct {
	pid, ppid int
	uid       uint32
	comm      string
	pssKB     int64 // proportional set size (smaps_rollup), RSS where that is unreadable
}

// allProcs reads every process of the host from /proc.
func allProcs() []zoneProc {
	entries, _ := os.ReadDir("/proc")
	var out []zoneProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		p := zoneProc{pid: pid}
		sc := bufio.NewScanner(bytes.NewReader(status))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			f := strings.Fields(v)
			switch {
			case k == "Name" && len(f) > 0:
				p.comm = f[0]
			case k == "PPid" && len(f) > 0:
				p.ppid, _ = strconv.Atoi(f[0])
			case k == "Uid" && len(f) > 0:
				u, _ := strconv.ParseUint(f[0], 10, 32)
				p.uid = uint32(u)
			case k == "VmRSS" && len(f) > 0:
				p.pssKB, _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
		if pss, ok := pssKB(pid); ok {
			p.pssKB = pss
		}
		out = append(out, p)
	}
	return out
}

// pssKB is the process's proportional set size: shared pages (the Go runtime's text, the
// node binary) count by the share each process has, so summing never counts them twice.
func pssKB(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// zoneMemory splits the host's processes into the zone's own (the agent and every
// descendant not running as an app's uid: the edge, the database host, its Postgres) and
// the apps' (any process, whatever its parent, running as one of appUIDs: instances, and
// what is kept per app across naps such as its network's pasta).
type zoneMemory struct {
	zoneKB, appsKB int64
	zoneProcs      int
	appProcs       map[uint32][]string // names, by uid
	appKBByName    map[string]int64    // the apps' processes' memory, by process name
	zoneKBByName   map[string]int64    // the zone's own processes' memory, by process name
}

func measureZoneMemory(agentPid int, appUIDs map[uint32]bool) zoneMemory {
	procs := allProcs()
	children := map[int][]int{}
	byPid := map[int]zoneProc{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
		byPid[p.pid] = p
	}
	m := zoneMemory{appProcs: map[uint32][]string{}, appKBByName: map[string]int64{}, zoneKBByName: map[string]int64{}}
	for _, p := range procs {
		if appUIDs[p.uid] {
			m.appsKB += p.pssKB
			m.appKBByName[p.comm] += p.pssKB
			m.appProcs[p.uid] = append(m.appProcs[p.uid], p.comm)
		}
	}
	queue := []int{agentPid}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if p, ok := byPid[pid]; ok && !appUIDs[p.uid] {
			m.zoneKB += p.pssKB
			m.zoneKBByName[p.comm] += p.pssKB
			m.zoneProcs++
		}
		queue = append(queue, children[pid]...)
	}
	return m
}

// networkKeeper names the processes an app keeps while it naps (sandbox/network.go): its
// network namespace's holder (a bubblewrap sandbox running sleep) and pasta (passt) attached
// to it, made on its first wake and kept across naps.
func networkKeeper(comm string) bool {
	return comm == "bwrap" || comm == "sleep" || strings.HasPrefix(comm, "pasta") || strings.HasPrefix(comm, "passt")
}

// awake reports whether uid runs anything but what a napping app keeps.
func (m zoneMemory) awake(uid uint32) bool {
	for _, c := range m.appProcs[uid] {
		if !networkKeeper(c) {
			return true
		}
	}
	return false
}
