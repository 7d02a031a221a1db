package runner

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
	"strings"
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

	Bwrap, Pasta, Prlimit, Nsenter string // tool paths
	Cgroups                        *Cgroups
	Seccomp                        []byte // compiled filter (SeccompProgram)

	MemoryBytes  int64 // per app: its cgroup's memory limit
	MaxProcesses int64 // per app: its cgroup's pids limit
	MaxOpenFiles int64 // per process: RLIMIT_NOFILE
	DiskBytes    int64 // per app: its tree's filesystem, and /tmp's tmpfs
	// PoolerPort is the one host loopback port an app reaches (127.0.0.1:<port> inside);
	// 0 forwards none.
	PoolerPort int

	ids *idCache
}

// idCache is the uid of each app the agent has looked up (see Local.identity); shared by
// the copies of a Sandbox value.
type idCache struct {
	mu    sync.Mutex
	ids   map[string]uint32
	netMu sync.Mutex
	nets  map[string]*appNet // each app's network namespace (network.go), under netMu
}

// SetUID records the uid allocated to an app.
func (s *Sandbox) SetUID(appID string, uid uint32) {
	if s.ids == nil {
		s.ids = &idCache{ids: map[string]uint32{}}
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

// basePath is the PATH customer processes get: system tools only, nothing of the agent's.
const basePath = "/usr/local/bin:/usr/bin:/bin"

// Environ is the whole environment of a customer process: the deploy's variables, PORT when
// set, and a minimal PATH, HOME, TMPDIR and LANG. Nothing of the agent's environment
// (database URL, signing key, Vault token) is inherited.
func Environ(vars map[string]string, port int) []string {
	env := map[string]string{"PATH": basePath, "HOME": AppRoot, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
	for k, v := range vars {
		env[k] = v
	}
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
	AppID          string
	Dir            string // the revision's tree on the host, seen as /app
	Argv           []string
	Env            []string
	CPU            float64
	Stdout, Stderr io.Writer
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
	if err := s.Cgroups.Setup(spec.AppID, Limits{MemoryBytes: s.MemoryBytes, Pids: s.MaxProcesses, CPU: spec.CPU}); err != nil {
		return nil, err
	}
	network, err := s.network(ctx, spec.AppID, cred)
	if err != nil {
		return nil, err
	}
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
	// bwrap runs in the app's user and network namespaces (nsenter, as the app's uid, the
	// owner of both), and makes its own nested user namespace and the others inside.
	holder := strconv.Itoa(network.holderPID)
	args := append([]string{"--target", holder, "--user", "--net", "--preserve-credentials", "--", s.Bwrap}, s.bwrapArgs(cred.Uid, spec)...)
	cmd := exec.Command(s.Nsenter, args...)
	cmd.Dir = "/"
	cmd.Env = spec.Env
	// bwrap's own complaints (a folder it cannot bind, say) come before the app runs: kept to
	// say why a sandbox did not start, and passed on to the app's log as they were.
	diag := &startDiag{w: spec.Stderr}
	cmd.Stdout, cmd.Stderr = spec.Stdout, diag
	cmd.ExtraFiles = []*os.File{infoW, blockR, secR} // fds 3, 4, 5
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
	if err != nil {
		return nil, err
	}
	p := &Sandboxed{cmd: cmd, done: make(chan struct{}), sb: s, appID: spec.AppID, oomBefore: s.Cgroups.OOMKills(spec.AppID)}
	sandboxStarts.Inc() // metrics.go
	sandboxLive.Inc()
	go func() {
		p.err = cmd.Wait()
		sandboxLive.Dec()
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
	// Both bwrap and the namespace's first process join the group before anything of the
	// app runs: whatever they start is born inside it.
	for _, pid := range []int{cmd.Process.Pid, info.ChildPID} {
		if err := s.Cgroups.Add(spec.AppID, pid); err != nil {
			return nil, didNotStart(err)
		}
	}
	if p.netNS, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", info.ChildPID)); err != nil {
		return nil, didNotStart(err)
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

// startDiag passes bwrap's output through and keeps what came before the app started.
type startDiag struct {
	mu     sync.Mutex
	w      io.Writer
	before []byte
	done   bool
}

func (d *startDiag) Write(b []byte) (int, error) {
	d.mu.Lock()
	if !d.done && len(d.before) < 4096 {
		d.before = append(d.before, b[:min(len(b), 4096-len(d.before))]...)
	}
	d.mu.Unlock()
	if d.w == nil {
		return len(b), nil
	}
	return d.w.Write(b)
}

func (d *startDiag) started() { d.mu.Lock(); d.done = true; d.before = nil; d.mu.Unlock() }

func (d *startDiag) text() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.TrimSpace(string(d.before))
}

// seccompFD is a pipe holding the compiled filter, which bwrap reads whole.
func (s *Sandbox) seccompFD() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if _, err := w.Write(s.Seccomp); err != nil { // a few hundred bytes: fits the pipe
		r.Close()
		return nil, err
	}
	return r, nil
}

// bwrapArgs lays out what the sandbox sees.
func (s *Sandbox) bwrapArgs(uid uint32, spec Spec) []string {
	id := strconv.FormatUint(uint64(uid), 10)
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", id, "--gid", id, "--hostname", "app",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--info-fd", "3", "--block-fd", "4", "--seccomp", "5",
		"--ro-bind", "/usr", "/usr",
	}
	a = append(a, systemLinks()...)
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	a = append(a,
		"--proc", "/proc",
		// Not --dev: bwrap would then map root first and nest a second user namespace.
		// The same nodes, bound one by one.
		"--tmpfs", "/dev",
	)
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		a = append(a, "--dev-bind", "/dev/"+d, "/dev/"+d)
	}
	size := strconv.FormatInt(s.DiskBytes, 10)
	a = append(a,
		"--symlink", "/proc/self/fd", "/dev/fd",
		"--symlink", "/proc/self/fd/0", "/dev/stdin",
		"--symlink", "/proc/self/fd/1", "/dev/stdout",
		"--symlink", "/proc/self/fd/2", "/dev/stderr",
		"--size", size, "--tmpfs", "/dev/shm",
		"--size", size, "--tmpfs", "/tmp",
		"--bind", spec.Dir, AppRoot,
		// The root bwrap builds the view on is a tmpfs: read-only, so the app writes only
		// to its tree, /tmp and /dev/shm.
		"--remount-ro", "/",
		"--chdir", AppRoot,
		"--",
	)
	// Inside, as the app: the agent's root lacks CAP_SYS_RESOURCE on some hosts (this
	// project's among them), so it cannot set another uid's limits from outside.
	if s.Prlimit != "" {
		a = append(a, s.Prlimit, "--nofile="+strconv.FormatInt(s.MaxOpenFiles, 10), "--core=0", "--")
	}
	return append(a, spec.Argv...)
}

// etcFiles are the parts of /etc common runtimes read (the dynamic loader, name
// resolution, certificates, time zone, users for tools that look the uid up); nothing else
// of the host's configuration is visible.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/protocols", "/etc/services", "/etc/ssl", "/etc/ca-certificates", "/etc/pki",
	"/etc/localtime", "/etc/timezone", "/etc/mime.types", "/etc/passwd", "/etc/group",
	"/etc/os-release", "/etc/debian_version", "/etc/python3", "/etc/python3.11",
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

// OOMKilled reports whether the kernel killed one of the app's processes for its memory
// since this sandbox started.
func (p *Sandboxed) OOMKilled() bool { return p.sb.Cgroups.OOMKills(p.appID) > p.oomBefore }

// Kill ends the sandbox: bwrap dies, its first process in the namespace gets its death
// signal, and with the pid namespace's first process gone the kernel kills every other
// process in it, setsid'd or not. The app's network namespace stays for its next start.
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

// ShellCommand runs a manifest command line through /bin/sh -c.
func ShellCommand(line string) []string { return []string{"/bin/sh", "-c", line} }

// StartCommand is ShellCommand for a service's start line. A simple command is exec'd by
// the shell, so the service itself is the sandbox's command, without a shell in between.
func StartCommand(line string) []string {
	// Left to the shell as written: compound lines; a line that execs already (the Procfile
	// habit), which would become "exec exec …"; and one that starts with a variable
	// assignment (NODE_ENV=production node …), which exec would take for a command name.
	fields := strings.Fields(line)
	if strings.ContainsAny(line, ";&|()`\n") || len(fields) == 0 || fields[0] == "exec" || strings.Contains(fields[0], "=") {
		return ShellCommand(line)
	}
	return ShellCommand("exec " + line)
}
