package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Terminate stops the sandbox the way a host stops a dyno: SIGTERM to every process of its
// instance (not to bubblewrap, whose death would kill them all at once, nor to the init,
// which would pass the signal on a second time), then Kill once they are gone or grace has
// passed, whichever comes first. A sandbox without an instance leaf (a build) is killed.
func (p *Sandboxed) Terminate(grace time.Duration) {
	if p.instance != "" && p.sb != nil && p.sb.Cgroups != nil {
		init := filepath.Base(p.sb.Init)
		leaf := p.sb.Cgroups.LeafDir("pids", p.appID, p.leaf)
		for _, pid := range procsIn(leaf) {
			if name := processName(pid); name == "bwrap" || (init != "." && name == init) {
				continue
			}
			signalMember(leaf, pid, syscall.SIGTERM)
		}
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	p.Kill()
}

// signalMember signals pid only while it is still a member of leaf: the process is pinned
// by a pidfd first, so a pid that ended and was reused by a process outside the sandbox
// between reading the group and signalling is never signalled.
func signalMember(leaf string, pid int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if !slices.Contains(procsIn(leaf), pid) {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

// processName is the kernel's short name of pid (its comm), "" when it has gone.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
