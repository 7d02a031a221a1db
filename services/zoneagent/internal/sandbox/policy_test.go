package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The sandbox's promise, one row a claim, checked on what each part that keeps it is given
// by the Policy: the zone's nftables table, pasta's forwarding, the cgroup, prlimit, the
// mounts and the seccomp filter. TestSandboxEgress and the host-boundary tests show the same
// promise held by the real tools.
func TestPolicy(t *testing.T) {
	p := Policy{PoolerPort: 6432, MemoryBytes: 512 << 20, MaxProcesses: 256, MaxOpenFiles: 1024, DiskBytes: 1 << 30,
		ResolverPort: 40053, GoRoot: "/usr/local/go"}
	noPooler := p
	noPooler.PoolerPort, noPooler.ResolverPort = 0, 0
	fw := func(p Policy) string {
		return Firewall{Table: "tori_t", UIDLo: 200001, UIDHi: 299999, Policy: p}.Ruleset()
	}
	joined := func(a []string) string { return strings.Join(a, " ") }
	eperm, enosys := p.refusedSyscalls()

	for _, c := range []struct {
		claim        string
		got          string   // what the Policy hands the part that keeps the claim
		want, refuse []string // must hold, must not
	}{
		{"only the apps' uids are held to the promise", fw(p),
			[]string{"meta skuid != 200001-299999 accept"}, nil},
		{"replies to the edge's connections pass", fw(p),
			[]string{"ct state established,related accept"}, nil},
		{"the pooler's port is the one host port reached", fw(p),
			[]string{"ip daddr 127.0.0.1 tcp dport 6432 accept"}, []string{"dport 5432"}},
		{"the zone's resolver is reached on its loopback port; no resolver of the host's network", fw(p),
			[]string{"ip daddr 127.0.0.1 meta l4proto { tcp, udp } th dport 40053 accept"},
			[]string{"dport 53 ", "th dport 53\n"}},
		{"the refusals follow the resolver's accept", fw(p)[strings.Index(fw(p), "dport 40053"):],
			[]string{"10.0.0.0/8", "fc00::/7"}, nil},
		{"pasta carries port 53 of the namespace to the zone's resolver, UDP and TCP", joined(p.pastaPorts()),
			[]string{"--tcp-ns 6432,53:40053", "--udp-ns 53:40053"}, nil},
		{"the sandbox's resolv.conf is the zone's, never the host's", joined(p.mounts("/x", "")),
			[]string{"--ro-bind-data 7 /etc/resolv.conf"}, []string{"--ro-bind-try /etc/resolv.conf"}},
		{"without a pooler or resolvers, no host port at all", fw(noPooler),
			[]string{"fib daddr type { local, broadcast, multicast, anycast } reject"}, []string{"dport"}},
		{"the host's own addresses are refused", fw(p),
			[]string{"fib daddr type { local, broadcast, multicast, anycast } reject"}, nil},
		{"loopback, private, link-local, CGNAT, multicast and reserved IPv4 are refused", fw(p),
			[]string{"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "224.0.0.0/4", "240.0.0.0/4", "0.0.0.0/8"}, nil},
		{"their IPv6 kin are refused", fw(p),
			[]string{"::/127", "::ffff:0:0/96", "fc00::/7", "fe80::/10", "ff00::/8"}, nil},
		{"the refusals follow the pooler's accept", fw(p)[strings.Index(fw(p), "dport 6432"):],
			[]string{"ip daddr {", "ip6 daddr {"}, nil},
		{"image containers get the same refusals", p.RefuseNonPublic(),
			[]string{"10.0.0.0/8", "fc00::/7", "fib daddr type"}, []string{"accept"}},
		{"nothing comes in through pasta; out, only the pooler's port and the zone's resolver", joined(p.pastaPorts()),
			[]string{"--tcp-ports none", "--udp-ports none", "--tcp-ns 6432,53:40053", "--udp-ns 53:40053"}, nil},
		{"without a pooler or resolver pasta forwards nothing", joined(noPooler.pastaPorts()),
			[]string{"--tcp-ns none", "--tcp-ports none", "--udp-ns none"}, []string{"6432", "53"}},
		{"memory, processes and CPU of the app", strings.Join([]string{
			strconv.FormatInt(p.limits(0.5).MemoryBytes, 10), strconv.FormatInt(p.limits(0.5).Pids, 10),
			strconv.FormatFloat(p.limits(0.5).CPU, 'g', -1, 64)}, " "),
			[]string{"536870912 256 0.5"}, nil},
		{"open files per process, set by the launcher before bwrap", joined(p.launcherArgs("/usr/bin/nsenter", "-t", "1")),
			[]string{"--nofile=1024:1024 --core=0:0 -- /usr/bin/nsenter -t 1"}, nil},
		{"the app's tree at /app, the one writable bind", joined(p.mounts("/srv/apps/a/d", "")),
			[]string{"--bind /srv/apps/a/d /app", "--chdir /app", "--remount-ro /"}, []string{"--bind-try", "--dev-bind / "}},
		{"the system read-only, /tmp and /dev/shm of the disk's size", joined(p.mounts("/x", "")),
			[]string{"--ro-bind /usr /usr", "--size 1073741824 --tmpfs /tmp", "--size 1073741824 --tmpfs /dev/shm", "--proc /proc"}, nil},
		{"the zone's Go, read-only, at /opt/go", joined(p.mounts("/x", "")),
			[]string{"--ro-bind /usr/local/go /opt/go"}, []string{"--bind /usr/local/go"}},
		{"without a Go, no /opt/go", joined(Policy{DiskBytes: 1}.mounts("/x", "")), nil, []string{"/opt/go"}},
		{"GOTOOLCHAIN is local whatever the deploy says; the zone's Go is first on PATH",
			joined(Environ(map[string]string{"GOTOOLCHAIN": "auto", "APP": "1"}, 8080)),
			[]string{"GOTOOLCHAIN=local", "PATH=/opt/go/bin:/usr/local/bin:/usr/bin:/bin", "APP=1", "PORT=8080"}, []string{"GOTOOLCHAIN=auto"}},
		{"a /dev of six nodes, nothing of the host's folders", joined(p.mounts("/x", "")),
			[]string{"--dev-bind /dev/null /dev/null", "--dev-bind /dev/urandom /dev/urandom", "--tmpfs /dev"},
			[]string{"/home", "/root", "/var", "/dev/sda", "/dev/kmsg", "/sys", "/run"}},
		{"a build also sees its app's cache at /cache, bound before the root goes read-only",
			joined(p.mounts("/srv/apps/a/d", "/srv/apps/a/.build-cache")),
			[]string{"--bind /srv/apps/a/d /app --bind /srv/apps/a/.build-cache /cache --remount-ro /"}, nil},
		{"other commands see no cache", joined(p.mounts("/srv/apps/a/d", "")),
			[]string{"--bind /srv/apps/a/d /app --remount-ro /"}, []string{"/cache"}},
		{"the network holder sees the system and its /proc only", joined(p.holderMounts()),
			[]string{"--ro-bind /usr /usr", "--proc /proc", "--remount-ro /"}, []string{"--bind ", "/app", "/etc"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.got, w) {
				t.Errorf("%s: %q missing from\n%s", c.claim, w, c.got)
			}
		}
		for _, n := range c.refuse {
			if strings.Contains(c.got, n) {
				t.Errorf("%s: %q present in\n%s", c.claim, n, c.got)
			}
		}
	}

	// The seccomp filter refuses what Docker's default profile refuses (amd64, where the
	// zone runs), and the compiled program holds each of them.
	prog := SeccompProgram(p)
	for name, nr := range map[string]uintptr{"unshare": unix.SYS_UNSHARE, "setns": unix.SYS_SETNS, "mount": unix.SYS_MOUNT,
		"ptrace": unix.SYS_PTRACE, "bpf": unix.SYS_BPF, "kexec_load": unix.SYS_KEXEC_LOAD, "io_uring_setup": unix.SYS_IO_URING_SETUP} {
		if !slices.Contains(eperm, nr) {
			t.Errorf("seccomp: %s is not refused", name)
		}
	}
	if !slices.Contains(enosys, unix.SYS_CLONE3) {
		t.Error("seccomp: clone3 must answer ENOSYS")
	}
	compared := map[uint32]bool{} // the numbers the program compares the call with
	for i := 0; i+8 <= len(prog); i += 8 {
		if binary.NativeEndian.Uint16(prog[i:]) == bpfJeqK {
			compared[binary.NativeEndian.Uint32(prog[i+4:])] = true
		}
	}
	for _, nr := range append(slices.Clone(eperm), enosys...) {
		if !compared[uint32(nr)] {
			t.Errorf("seccomp: the program does not look at call %d", nr)
		}
	}
}

// The zone's resolver asks resolv.conf's nameservers (loopback ones too: it is the zone's
// own process on the host); the Go toolchain is found through the go on PATH.
func TestHostResolversAndGoRoot(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(conf, []byte("# comment\nnameserver 10.255.255.53\nnameserver 127.0.0.53\nsearch example\nnameserver ::ffff:192.0.2.53\nnameserver fe80::1%eth0\nnameserver junk\n"), 0o644)
	reach, loop := HostResolvers(conf)
	if got := fmt.Sprint(reach); got != "[10.255.255.53 192.0.2.53 fe80::1]" {
		t.Errorf("reachable %s", got)
	}
	if got := fmt.Sprint(loop); got != "[127.0.0.53]" {
		t.Errorf("loopback %s", got)
	}
	if got := fmt.Sprint(hostUpstreams(conf)); got != "[10.255.255.53:53 192.0.2.53:53 [fe80::1]:53 127.0.0.53:53]" {
		t.Errorf("the resolver's upstreams %s", got)
	}
	if r, l := HostResolvers(filepath.Join(t.TempDir(), "none")); r != nil || l != nil {
		t.Errorf("a missing resolv.conf gives %v %v", r, l)
	}

	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "go", "bin"), 0o755)
	os.MkdirAll(filepath.Join(root, "go", "src", "runtime"), 0o755)
	os.WriteFile(filepath.Join(root, "go", "bin", "go"), []byte("#!/bin/true\n"), 0o755)
	os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755)
	os.Symlink(filepath.Join(root, "go", "bin", "go"), filepath.Join(root, "usr", "bin", "go"))
	if got := GoRootOf(filepath.Join(root, "usr", "bin", "go")); got != filepath.Join(root, "go") {
		t.Errorf("GoRootOf a link: %q", got)
	}
	os.WriteFile(filepath.Join(root, "usr", "bin", "notgo"), nil, 0o755)
	if got := GoRootOf(filepath.Join(root, "usr", "bin", "notgo")); got != "" {
		t.Errorf("GoRootOf a binary outside a toolchain: %q", got)
	}
	if FindGoRoot() == "" {
		t.Error("this host's go (which builds the project) was not found")
	}
}
