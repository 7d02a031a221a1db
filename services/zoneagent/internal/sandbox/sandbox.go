// Package sandbox confines customer code on this host: bubblewrap and its namespaces, the
// app's network namespace and pasta, the zone's nftables table, cgroups, disks, the seccomp
// filter and the checks on what bubblewrap reports. It knows nothing of revisions or of how
// processes are kept running (internal/supervisor does that).
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// CodeSandboxUnavailable fails a source deploy on a host that cannot confine it.
const CodeSandboxUnavailable = "sandbox_unavailable"

// AppRoot is where an app's tree appears inside its sandbox (its HOME and working folder).
const AppRoot = "/app"

// Sandbox runs customer code (build, release Job, service process) confined: bubblewrap
// makes user, pid, mount, ipc, uts and cgroup namespaces inside the app's own user and
// network namespaces (network.go: made once per app, connected by pasta to the pooler and
// the internet; the edge dials in), started as the app's own uid so that every process is
// that uid on the host too; a cgroup per app bounds memory, processes and CPU; a seccomp
// filter refuses what Docker's default profile refuses. See the README's "The sandbox".
type Sandbox struct {
	// Unavailable, when not empty, says why this host cannot confine customer code; source
	// deploys then fail with sandbox_unavailable instead of running unconfined.
	Unavailable string

	Bwrap, Pasta, Nsenter string // tool paths
	// Launcher is the program every sandbox starts through (launcher.go): prlimit, which sets
	// the sandbox's hard limits before anything of the app exists.
	Launcher string
	// Init is the sandbox's first process (tini): a program freshly executed, where
	// bubblewrap's own would be pid 1 with bubblewrap's memory (host paths) readable to the app.
	Init    string
	Cgroups *Cgroups
	Seccomp []byte // compiled filter (SeccompProgram)

	// Policy is the promise the sandbox keeps (policy.go): reach, limits, mounts.
	Policy
	// Resolver is the zone's DNS relay every app asks (resolver.go); nil: apps get none.
	Resolver *Resolver

	ids *idCache
}

// idCache is the uid of each app the agent has looked up (see supervisor.Identities.Ensure); shared by
// the copies of a Sandbox value.
type idCache struct {
	mu    sync.Mutex
	ids   map[string]uint32
	netMu sync.Mutex
	nets  map[string]*netSlot // each app's network namespace (netkeep.go), under netMu
	// making holds a token for each network being made (netkeep.go): at most its capacity
	// at once.
	making chan struct{}
}

// SetUID records the uid allocated to an app.
func (s *Sandbox) SetUID(appID string, uid uint32) {
	if s.ids == nil {
		s.ids = &idCache{ids: map[string]uint32{}, making: make(chan struct{}, networksAtOnce())}
	}
	s.ids.mu.Lock()
	s.ids.ids[appID] = uid
	s.ids.mu.Unlock()
}

// ForgetUID drops the app's uid (freed with the app).
func (s *Sandbox) ForgetUID(appID string) {
	if s.ids != nil {
		s.ids.mu.Lock()
		delete(s.ids.ids, appID)
		s.ids.mu.Unlock()
	}
}

// Credential is the identity an app's processes and containers run as (uid and gid both
// its allocated id, no supplementary group), or nil before the app has one.
func (s Sandbox) Credential(appID string) *syscall.Credential {
	if s.ids == nil {
		return nil
	}
	s.ids.mu.Lock()
	uid, ok := s.ids.ids[appID]
	s.ids.mu.Unlock()
	if !ok {
		return nil
	}
	return &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}, NoSetGroups: false}
}

// BasePath is the PATH customer processes get: system tools only, nothing of the agent's.
const BasePath = "/usr/local/bin:/usr/bin:/bin"

// Environ is the whole environment of a customer process: the deploy's variables, PORT when
// set, and a minimal PATH (SandboxPath), HOME, TMPDIR and LANG. Nothing of the agent's
// environment (database URL, signing key, Vault token) is inherited. GOTOOLCHAIN is always
// local, whatever the variables say: builds use the zone's Go and never download another.
func Environ(vars map[string]string, port int) []string {
	env := map[string]string{"PATH": SandboxPath, "HOME": AppRoot, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
	for k, v := range vars {
		env[k] = v
	}
	env["GOTOOLCHAIN"] = "local"
	if port > 0 {
		env["PORT"] = strconv.Itoa(port)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Spec is one sandboxed command.
type Spec struct {
	AppID string
	Dir   string // the revision's tree on the host, seen as /app
	// BuildCache is the app's build cache on the host, seen as BuildCacheRoot; builds only
	// (see buildcache.go), "" for every other command.
	BuildCache     string
	Argv           []string
	Env            []string
	CPU            float64
	Stdout, Stderr io.Writer
	// Instance names one instance of the app (web.1, worker.2, cron.<job>.<run>): it runs in
	// a cgroup of its own under the app's, with CPU and MemoryBytes as its limits. Empty: the
	// app's own cgroup (builds and release jobs).
	Instance string
	// MemoryBytes is the instance's memory limit; 0 means the zone's per-app limit.
	MemoryBytes int64
}

// Sandboxed is a running sandbox.
type Sandboxed struct {
	cmd       *exec.Cmd
	netNS     *os.File // the app's network namespace, which the edge dials into
	done      chan struct{}
	err       error
	stopOnce  sync.Once
	oomBefore int64
	sb        *Sandbox
	appID     string
	// instance is Spec.Instance; leaf the group it runs in (its instance's, or BuildLeaf).
	instance, leaf string
	// memoryBytes is the limit its memory kills are over: its instance's, or the app's.
	memoryBytes int64
	// oomFinal is its instance leaf's count of memory kills when the leaf was removed.
	oomFinal int64
	started  time.Time // usage.go
}

// Start launches spec in a new sandbox. Cancelling ctx kills everything in it.
func (s *Sandbox) Start(ctx context.Context, spec Spec) (*Sandboxed, error) {
	if s.Unavailable != "" {
		return nil, errors.New("sandbox unavailable: " + s.Unavailable)
	}
	cred := s.Credential(spec.AppID)
	if cred == nil {
		return nil, fmt.Errorf("app %s has no uid", spec.AppID)
	}
	// The app's group keeps its totals; the command runs in a leaf with the plan's CPU: its
	// instance's, with the instance's memory, or the builds' one.
	if err := s.Cgroups.Setup(spec.AppID, s.limits(0)); err != nil {
		return nil, err
	}
	leaf, lim := BuildLeaf, Limits{CPU: spec.CPU}
	if spec.Instance != "" {
		if !ValidInstance(spec.Instance) {
			return nil, fmt.Errorf("sandbox: %q is not an instance name", spec.Instance)
		}
		leaf = s.Cgroups.claimInstance(spec.AppID, spec.Instance)
		lim.MemoryBytes = spec.MemoryBytes
		if lim.MemoryBytes <= 0 {
			lim.MemoryBytes = s.MemoryBytes
		}
	}
	// Until the command runs, a failure gives the instance's leaf back here; after, the
	// sandbox's end does.
	handedOff := false
	defer func() {
		if !handedOff && spec.Instance != "" {
			s.Cgroups.releaseLeaf(spec.AppID, leaf)
		}
	}()
	if err := s.Cgroups.SetupLeaf(spec.AppID, leaf, lim); err != nil {
		return nil, err
	}
	network, err := s.useNetwork(ctx, spec.AppID, cred)
	if err != nil {
		return nil, err
	}
	// Until the command runs a failure ends its use of the network here; after, its end does.
	defer func() {
		if !handedOff {
			s.leaveNetwork(network)
		}
	}()
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return nil, err
	}
	defer blockW.Close()
	secR, err := s.seccompFD()
	if err != nil {
		infoW.Close()
		blockR.Close()
		return nil, err
	}
	// Everything bwrap is told, the app's variables and the host paths of its tree among
	// them, travels in a descriptor it reads (--args): nothing of it is on a command line
	// (ps on the host shows every user the arguments; /proc/1/cmdline inside showed them
	// to the app) nor in the environment of a host program.
	argsR, err := bwrapArgsFile(s.bwrapOptions(cred.Uid, spec))
	if err != nil {
		infoW.Close()
		blockR.Close()
		secR.Close()
		return nil, err
	}
	// bwrap runs in the app's user and network namespaces (nsenter, as the app's uid, the
	// owner of both), and makes its own nested user namespace and the others inside. Both
	// run with the fixed host environment: the app's variables are set by bwrap itself
	// (--clearenv, --setenv) and reach only the command it executes inside the sandbox.
	holder := strconv.Itoa(network.holderPID)
	args := append([]string{"--target", holder, "--user", "--net", "--preserve-credentials", "--", s.Bwrap, "--args", "6", "--"}, s.command(spec)...)
	cmd := hostCommand(s.Launcher, s.launcherArgs(s.Nsenter, args...)...)
	// bwrap's own complaints (a folder it cannot bind, say) come before the app runs: kept to
	// say why a sandbox did not start, and passed on to the app's log as they were.
	diag := &startDiag{w: spec.Stderr}
	cmd.Stdout, cmd.Stderr = spec.Stdout, diag
	cmd.ExtraFiles = []*os.File{infoW, blockR, secR, argsR} // fds 3, 4, 5, 6
	if s.ResolverPort > 0 {
		// fd 7: the sandbox's /etc/resolv.conf (Policy.mounts), naming the zone's resolver.
		resolvR, err := resolvConfFile()
		if err != nil {
			infoW.Close()
			blockR.Close()
			secR.Close()
			argsR.Close()
			return nil, err
		}
		defer resolvR.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, resolvR)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Credential: cred,
	}
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	infoW.Close()
	blockR.Close()
	secR.Close()
	argsR.Close()
	if err != nil {
		return nil, err
	}
	handedOff = true
	p := &Sandboxed{cmd: cmd, done: make(chan struct{}), sb: s, appID: spec.AppID, instance: spec.Instance, leaf: leaf,
		memoryBytes: lim.MemoryBytes, started: time.Now()}
	if p.memoryBytes <= 0 {
		p.memoryBytes = s.MemoryBytes
	}
	p.oomBefore = p.OOMKills()
	sandboxStarts.Inc() // metrics.go
	sandboxLive.Inc()
	go func() {
		p.err = cmd.Wait()
		if p.instance != "" {
			// The instance's leaf goes with it (a cron run's would pile up); its count of
			// memory kills is kept for OOMKills.
			p.oomFinal = s.Cgroups.releaseLeaf(p.appID, p.leaf)
		}
		sandboxLive.Dec()
		// Before done: whoever waited for the end (a nap) may release the network.
		s.leaveNetwork(network)
		close(p.done)
	}()
	// didNotStart says why bwrap ended before the app ran: its own message when it gave one.
	didNotStart := func(err error) error {
		p.Kill()
		if why := diag.text(); why != "" {
			return fmt.Errorf("the sandbox did not start: %s", why)
		}
		return fmt.Errorf("the sandbox did not start: %v (%v)", err, p.err)
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPID <= 0 {
		return nil, didNotStart(err)
	}
	// The info descriptor is written by a process of the app's uid: the pid it names is
	// checked to be this sandbox's first process before root moves it into a cgroup or
	// enters its network namespace.
	child, err := verifyChild(info.ChildPID, sandboxChild{bwrap: cmd.Process.Pid, uid: cred.Uid, net: network.netNS})
	if err != nil {
		// bwrap ending during its set-up takes its child along before the check: its own
		// reason then says more than the check's. Nothing was done to the pid either way.
		if p.Kill(); diag.text() != "" {
			return nil, didNotStart(err)
		}
		return nil, err
	}
	defer child.close()
	p.netNS = child.netNS
	// Both bwrap and the namespace's first process join the group before anything of the
	// app runs: whatever they start is born inside it.
	for _, pid := range []int{cmd.Process.Pid, child.pid} {
		if err := s.Cgroups.Add(spec.AppID, leaf, pid); err != nil {
			return nil, didNotStart(err)
		}
	}
	if !child.alive() {
		return nil, didNotStart(errors.New("its first process ended during its set-up"))
	}
	// A write to a pipe whose reader is gone: bwrap ended during its set-up.
	if _, err := blockW.Write([]byte{1}); err != nil {
		return nil, didNotStart(err)
	}
	diag.started()
	go func() {
		select {
		case <-ctx.Done():
			p.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

// Pid is bwrap's pid on the host.
func (p *Sandboxed) Pid() int { return p.cmd.Process.Pid }

// Done closes when the sandbox has ended.
func (p *Sandboxed) Done() <-chan struct{} { return p.done }

// Wait waits for the sandbox's command and returns its error.
func (p *Sandboxed) Wait() error {
	<-p.done
	return p.err
}

// OOMKilled reports whether the kernel killed one of the sandbox's processes for its memory
// since it started (for a sandbox that is no instance: one of the app's).
func (p *Sandboxed) OOMKilled() bool { return p.OOMKills() > p.oomBefore }

// OOMKillsAtStart is OOMKills when this sandbox started: kills past it happened since.
func (p *Sandboxed) OOMKillsAtStart() int64 { return p.oomBefore }

// OOMKills counts the memory kills in the sandbox's group: its instance's leaf (kept once
// the sandbox has ended and the leaf is gone), or, for a build or release Job, the app's.
func (p *Sandboxed) OOMKills() int64 {
	if p.instance == "" {
		return p.sb.Cgroups.OOMKills(p.appID)
	}
	select {
	case <-p.done:
		return p.oomFinal
	default:
		return p.sb.Cgroups.LeafOOMKills(p.appID, p.leaf)
	}
}

// MemoryBytes is the memory limit the sandbox's memory kills are over: its instance's, or
// the app's total.
func (p *Sandboxed) MemoryBytes() int64 { return p.memoryBytes }

// CgroupLeaf is the leaf of the app's group the sandbox runs in: its instance's
// (<instance>, or <instance>_<n> while an earlier sandbox of the instance is still there),
// or BuildLeaf.
func (p *Sandboxed) CgroupLeaf() string { return p.leaf }

// Kill ends the sandbox: bwrap dies, its first process in the namespace gets its death
// signal, and with the pid namespace's first process gone the kernel kills every other
// process in it, setsid'd or not. The app's network namespace stays for its next start,
// unless the app naps (ReleaseIdleNetwork).
func (p *Sandboxed) Kill() {
	p.stopOnce.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
		<-p.done
		if p.netNS != nil {
			p.netNS.Close()
		}
	})
}
