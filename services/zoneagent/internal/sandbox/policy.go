package sandbox

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"tori.dev/contract/netrange"
)

// Policy is the sandbox's promise in one value: what an app may reach, its limits and what
// it sees. The zone's firewall (Firewall here, imageruntime.ContainerFirewall for image
// containers), the app's network (pasta, network.go), its cgroup and the launcher's limits, its mounts
// (bubblewrap's view) and the seccomp filter all read it; TestPolicy is the promise's table
// test. The README's "The sandbox: what customer code gets" says it in prose.
type Policy struct {
	// PoolerPort is the one port of the host an app reaches, as 127.0.0.1:<port> inside its
	// namespace (the database pooler); 0 forwards none. Beyond it, an app reaches the public
	// internet and nothing else (RefuseNonPublic); nothing reaches the app but the edge,
	// which dials into its namespace (no port is forwarded in through pasta).
	PoolerPort int
	// ResolverPort is the zone's DNS relay on the host's loopback (resolver.go), which an app
	// reaches as 127.0.0.1:53 in its namespace and finds in its /etc/resolv.conf; 0: none,
	// and no resolv.conf. An app never reaches a resolver of the host's network itself.
	ResolverPort int
	// GoRoot is the zone's Go toolchain on the host, shown read-only at GoRootInSandbox
	// (whose bin is on every sandboxed PATH): builds use the host's Go, never download one
	// (Environ sets GOTOOLCHAIN=local). "" shows none.
	GoRoot string

	MemoryBytes  int64 // per app, all its processes together: its cgroup's memory limit
	MaxProcesses int64 // per app: its cgroup's pids limit
	MaxOpenFiles int64 // per process: RLIMIT_NOFILE, soft and hard (and no core dumps), set by the launcher
	DiskBytes    int64 // per app: its tree's filesystem, and each of its /tmp and /dev/shm
	// The CPU ceiling is the plan's, per revision (Spec.CPU, Limits); the connection cap on
	// the pooler is PoolerClientsPerConnection per plan connection of each of the app's
	// databases (internal/managed's ClientCaps enforces it).
}

// The pooler's per-app connection cap (enforced by internal/managed's ClientCaps on the
// pooler's address): clients per server connection the plan gives each database, and for an
// app the zone knows no database of, each and all together.
const (
	PoolerClientsPerConnection    = 10
	PoolerClientsWithoutDatabase  = 50
	PoolerClientsWithoutDatabases = 1000
)

// refused4 and refused6 are the destinations no app reaches: the contract's refused ranges
// (netrange.Refused, which pkg/netguard holds a registry to as well), split by family as
// nftables takes them. What is left is the public internet.
var refused4, refused6 = refusedByFamily()

func refusedByFamily() (v4, v6 []string) {
	for _, r := range netrange.Refused {
		if r.Prefix.Addr().Is4() {
			v4 = append(v4, r.Prefix.String())
		} else {
			v6 = append(v6, ipv6Text(r.Prefix))
		}
	}
	return v4, v6
}

// ipv6Text is p as the firewall has always written it: netip writes the IPv4-mapped
// range dotted (::ffff:0.0.0.0/96), the rules name it in colons (::ffff:0:0/96).
func ipv6Text(p netip.Prefix) string {
	if !p.Addr().Is4In6() {
		return p.String()
	}
	a := p.Addr().As16()
	return fmt.Sprintf("::ffff:%x:%x/%d", uint16(a[12])<<8|uint16(a[13]), uint16(a[14])<<8|uint16(a[15]), p.Bits())
}

// RefuseNonPublic is the nftables rules (chain body lines) that refuse a new connection to
// the host's own addresses and to every refused range; both firewalls end with them.
func (Policy) RefuseNonPublic() string {
	var b strings.Builder
	b.WriteString("\t\tfib daddr type { local, broadcast, multicast, anycast } reject\n")
	fmt.Fprintf(&b, "\t\tip daddr { %s } reject\n", strings.Join(refused4, ", "))
	fmt.Fprintf(&b, "\t\tip6 daddr { %s } reject\n", strings.Join(refused6, ", "))
	return b.String()
}

// egressRules is the sandbox's output chain for sockets of the apps' uids (pasta's, on the
// host): replies on connections that came in (the edge), the pooler's port, then the refusals.
func (p Policy) egressRules() string {
	var b strings.Builder
	b.WriteString("\t\tct state established,related accept\n")
	if p.PoolerPort > 0 {
		fmt.Fprintf(&b, "\t\tip daddr 127.0.0.1 tcp dport %d accept\n", p.PoolerPort)
	}
	if p.ResolverPort > 0 {
		fmt.Fprintf(&b, "\t\tip daddr 127.0.0.1 meta l4proto { tcp, udp } th dport %d accept\n", p.ResolverPort)
	}
	b.WriteString(p.RefuseNonPublic())
	return b.String()
}

// pastaPorts is what pasta forwards: nothing in from the host (the edge dials into the
// namespace instead), and out to the host's loopback only the pooler's port and the zone's
// resolver (port 53 in the namespace, its own port on the host).
func (p Policy) pastaPorts() []string {
	var tcp []string
	udp := "none"
	if p.PoolerPort > 0 {
		tcp = append(tcp, strconv.Itoa(p.PoolerPort))
	}
	if p.ResolverPort > 0 {
		dns := "53:" + strconv.Itoa(p.ResolverPort)
		tcp, udp = append(tcp, dns), dns
	}
	if len(tcp) == 0 {
		tcp = []string{"none"}
	}
	return []string{"--tcp-ports", "none", "--udp-ports", "none", "--tcp-ns", strings.Join(tcp, ","), "--udp-ns", udp}
}

// limits is the app's cgroup for a revision with the plan's cpu (0: no CPU ceiling).
func (p Policy) limits(cpu float64) Limits {
	return Limits{MemoryBytes: p.MemoryBytes, Pids: p.MaxProcesses, CPU: cpu}
}

// etcFiles are the parts of /etc common runtimes read (the dynamic loader, name
// resolution, certificates, time zone, users for tools that look the uid up); nothing else
// of the host's configuration is visible.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/protocols", "/etc/services", "/etc/ssl", "/etc/ca-certificates", "/etc/pki",
	"/etc/localtime", "/etc/timezone", "/etc/mime.types", "/etc/passwd", "/etc/group",
	"/etc/os-release", "/etc/debian_version", "/etc/python3", "/etc/python3.11",
}

// resolvConfFD is the descriptor bubblewrap reads the sandbox's resolv.conf from
// (Sandbox.Start passes it).
const resolvConfFD = "7"

// devices are the only nodes of /dev an app gets.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// mounts is what an app's sandbox sees (bubblewrap's options): the system read-only, a few
// files of /etc, its own /proc, a /dev of devices, the zone's Go read-only, a private /tmp
// and /dev/shm of DiskBytes, its tree (dir on the host) at AppRoot, for a build its cache
// (cache on the host, "" for none) at BuildCacheRoot, and a read-only root. Nothing else of
// the host.
func (p Policy) mounts(dir, cache string) []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	a = append(a, systemLinks()...)
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	// Not the host's resolv.conf: the zone's resolver (resolver.go), from a descriptor.
	if p.ResolverPort > 0 {
		a = append(a, "--ro-bind-data", resolvConfFD, "/etc/resolv.conf")
	}
	a = append(a,
		"--proc", "/proc",
		// Not --dev: bwrap would then map root first and nest a second user namespace.
		// The same nodes, bound one by one.
		"--tmpfs", "/dev",
	)
	for _, d := range devices {
		a = append(a, "--dev-bind", "/dev/"+d, "/dev/"+d)
	}
	size := strconv.FormatInt(p.DiskBytes, 10)
	if p.GoRoot != "" {
		a = append(a, "--ro-bind", p.GoRoot, GoRootInSandbox)
	}
	a = append(a,
		"--symlink", "/proc/self/fd", "/dev/fd",
		"--symlink", "/proc/self/fd/0", "/dev/stdin",
		"--symlink", "/proc/self/fd/1", "/dev/stdout",
		"--symlink", "/proc/self/fd/2", "/dev/stderr",
		"--size", size, "--tmpfs", "/dev/shm",
		"--size", size, "--tmpfs", "/tmp",
		"--bind", dir, AppRoot,
	)
	if cache != "" {
		a = append(a, "--bind", cache, BuildCacheRoot)
	}
	return append(a,
		// The root bwrap builds the view on is a tmpfs: read-only, so the app writes only
		// to its tree, /tmp and /dev/shm (and a build to its cache).
		"--remount-ro", "/",
		"--chdir", AppRoot,
	)
}

// holderMounts is what the network namespace's holder (sleep) sees: the system and /proc.
func (Policy) holderMounts() []string {
	a := append([]string{"--ro-bind", "/usr", "/usr"}, systemLinks()...)
	return append(a, "--proc", "/proc", "--remount-ro", "/")
}

// systemLinks are the top-level system folders as the host has them: merged-/usr hosts link
// them into /usr, others have real folders.
func systemLinks() []string {
	var a []string
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if target, err := os.Readlink(d); err == nil {
			a = append(a, "--symlink", target, d)
		} else {
			a = append(a, "--ro-bind-try", d, d)
		}
	}
	return a
}

// refusedSyscalls are the calls the seccomp filter refuses (seccomp_<arch>.go): with EPERM
// what Docker's default profile refuses a container without added capabilities, with
// ENOSYS those a C library then does another way.
func (Policy) refusedSyscalls() (eperm, enosys []uintptr) {
	return deniedSyscalls, enosysSyscalls
}
