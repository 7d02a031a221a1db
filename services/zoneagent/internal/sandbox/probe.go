package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// SandboxConfig is what the sandbox is made from (the zone's settings).
type SandboxConfig struct {
	Zone              string
	Bwrap, Pasta, Nft string // names on PATH or paths
	CgroupMount       string // normally /sys/fs/cgroup
	// UIDBase..UIDBase+UIDCount-1 are the apps' uids; UIDBase itself is kept for the
	// start-up probe, apps get the ones above it.
	UIDBase, UIDCount uint32
	MemoryBytes       int64
	MaxProcesses      int64
	MaxOpenFiles      int64
	DiskBytes         int64
	PoolerPort        int
	// GoRoot is the zone's Go toolchain, shown read-only in every sandbox; "" none.
	GoRoot string
	// Resolvers are the upstreams (IP:port) of the zone's DNS relay, the one resolver apps
	// ask (resolver.go): ZONE_SANDBOX_RESOLVERS; none, the nameservers of ResolvConf.
	Resolvers []string
	// ResolvConf is the host's resolver configuration (default /etc/resolv.conf).
	ResolvConf string
}

// probeApp is the name the start-up probe runs under: its cgroup is this agent's alone
// (agents of the same zone name on one host, as tests run them, must not kill each other's
// probe when they remove theirs).
var probeApp = fmt.Sprintf("tori-sandbox-probe-%d-%d", os.Getpid(), time.Now().UnixNano())

// NewSandbox makes the sandbox and proves it: it finds the tools, makes the zone's cgroups,
// loads its nftables table and runs one command in a sandbox. What fails makes the sandbox
// unavailable, with the reason in Unavailable; customer code then never runs.
func NewSandbox(ctx context.Context, c SandboxConfig) Sandbox {
	if c.ResolvConf == "" {
		c.ResolvConf = "/etc/resolv.conf"
	}
	s := Sandbox{Policy: Policy{PoolerPort: c.PoolerPort, GoRoot: c.GoRoot, MemoryBytes: c.MemoryBytes,
		MaxProcesses: c.MaxProcesses, MaxOpenFiles: c.MaxOpenFiles, DiskBytes: c.DiskBytes}}
	s.SetUID(probeApp, c.UIDBase)
	upstreams := c.Resolvers
	if len(upstreams) == 0 {
		upstreams = hostUpstreams(c.ResolvConf)
	}
	// Before the firewall and pasta: both carry its port.
	r, err := StartResolver(upstreams)
	if err != nil {
		s.Unavailable = err.Error()
		return s
	}
	s.Resolver, s.ResolverPort = r, r.Port
	if err := s.setup(ctx, c); err != nil {
		s.Unavailable = err.Error()
	}
	return s
}

func (s *Sandbox) setup(ctx context.Context, c SandboxConfig) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the agent is not root, so it cannot start apps as uids of their own")
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return fmt.Errorf("user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)")
	}
	var err error
	if s.Bwrap, err = exec.LookPath(c.Bwrap); err != nil {
		return fmt.Errorf("bubblewrap not found (ZONE_BWRAP=%s): %v", c.Bwrap, err)
	}
	if s.Pasta, err = exec.LookPath(c.Pasta); err != nil {
		return fmt.Errorf("pasta (passt) not found (ZONE_PASTA=%s): %v", c.Pasta, err)
	}
	// prlimit sets the sandbox's hard limits before nsenter (launcher.go); util-linux, as nsenter.
	if s.Launcher, err = exec.LookPath("prlimit"); err != nil {
		return fmt.Errorf("prlimit (util-linux) not found: %v", err)
	}
	// The sandbox's first process (see Sandbox.command): tini-static, which the app's loader
	// variables cannot touch, or tini.
	if s.Init, err = exec.LookPath("tini-static"); err != nil {
		if s.Init, err = exec.LookPath("tini"); err != nil {
			return fmt.Errorf("tini not found: %v", err)
		}
	}
	if s.Nsenter, err = exec.LookPath("nsenter"); err != nil {
		return fmt.Errorf("nsenter (util-linux) not found: %v", err)
	}
	nft, err := exec.LookPath(c.Nft)
	if err != nil {
		return fmt.Errorf("nft (nftables) not found (ZONE_NFT=%s): %v", c.Nft, err)
	}
	if eperm, _ := s.refusedSyscalls(); len(eperm) == 0 {
		return fmt.Errorf("no seccomp filter for this architecture")
	}
	if s.Seccomp = SeccompProgram(s.Policy); s.Seccomp == nil {
		return fmt.Errorf("no seccomp filter for this architecture")
	}
	if s.Cgroups, err = DetectCgroups(c.CgroupMount, c.Zone); err != nil {
		return err
	}
	fw := Firewall{Nft: nft, Table: "tori_" + strings.ReplaceAll(c.Zone, "-", "_"), UIDLo: c.UIDBase, UIDHi: c.UIDBase + c.UIDCount - 1, Policy: s.Policy}
	if err := fw.Apply(); err != nil {
		return err
	}
	return s.probe(ctx)
}

// probe runs /bin/true in a sandbox with a network, as the probe's uid.
func (s *Sandbox) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "tori-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cred := s.Credential(probeApp)
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	defer s.Cgroups.Remove(probeApp)
	defer s.ReleaseNetwork(probeApp)
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	sb, err := s.Start(pctx, Spec{AppID: probeApp, Dir: dir, Argv: []string{"/bin/sh", "-c", "exit 0"}, Env: Environ(nil, 0), Stdout: &out, Stderr: &out})
	if err != nil {
		return fmt.Errorf("a test sandbox did not start: %v", err)
	}
	if err := sb.Wait(); err != nil {
		return fmt.Errorf("a test sandbox failed: %v: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}
