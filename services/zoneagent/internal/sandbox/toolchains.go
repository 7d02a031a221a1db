package sandbox

import (
	"bufio"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// What builds find in the sandbox besides the system (/usr: node and npm, python3 and pip
// from Debian, which the project's scripts install): the zone's Go, bound read-only, and the
// zone's resolver (resolver.go), so the npm registry, PyPI and the Go module proxy are
// reached by name. Nothing is downloaded to build with.

// GoRootInSandbox is where the zone's Go appears inside every sandbox (Policy.GoRoot).
const GoRootInSandbox = "/opt/go"

// SandboxPath is the PATH of customer processes: the zone's Go, then system tools only.
const SandboxPath = GoRootInSandbox + "/bin:" + BasePath

// FindGoRoot is the Go toolchain of the go on PATH (following links, as Debian's
// /usr/bin/go → /usr/lib/go-1.x/bin/go), or "" when there is none.
func FindGoRoot() string {
	bin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	return GoRootOf(bin)
}

// GoRootOf is the toolchain holding the go binary at bin (<root>/bin/go), or "".
func GoRootOf(bin string) string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	root := filepath.Dir(filepath.Dir(real))
	if fi, err := os.Stat(filepath.Join(root, "src", "runtime")); err != nil || !fi.IsDir() {
		return ""
	}
	return root
}

// HostResolvers are the nameservers of resolv.conf (the host's; apps never see it), the
// loopback ones apart: the zone's resolver asks them all (hostUpstreams).
func HostResolvers(resolvConf string) (reachable, loopback []netip.Addr) {
	f, err := os.Open(resolvConf)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || fields[0] != "nameserver" {
			continue
		}
		addr, err := netip.ParseAddr(fields[1])
		if err != nil {
			continue
		}
		addr = addr.Unmap().WithZone("")
		if addr.IsLoopback() || addr.IsUnspecified() {
			loopback = append(loopback, addr)
		} else {
			reachable = append(reachable, addr)
		}
	}
	return reachable, loopback
}
