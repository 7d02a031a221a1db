package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Terminate stops the sandbox the way a host stops a dyno: SIGTERM to every process of its
// instance (not to bubblewrap, whose death would kill them all at once, nor to the init,
// which would pass the signal on a second time), then Kill once they are gone or grace has
// passed, whichever comes first. A sandbox without an instance leaf (a build) is killed.
func (p *Sandboxed) Terminate(grace time.Duration) {
	if p.instance != "" && p.sb != nil && p.sb.Cgroups != nil {
		init := filepath.Base(p.sb.Init)
		for _, pid := range procsIn(p.sb.Cgroups.LeafDir("pids", p.appID, p.leaf)) {
			if name := processName(pid); name == "bwrap" || (init != "." && name == init) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	p.Kill()
}

// processName is the kernel's short name of pid (its comm), "" when it has gone.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
