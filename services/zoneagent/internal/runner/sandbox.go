package runner

import (
	"context"
	"hash/fnv"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sandbox builds the commands customer code runs as: a clean environment, resource limits,
// its own process group, and (when the agent runs as root) an unprivileged identity.
type Sandbox struct {
	MemoryBytes  int64 // RLIMIT_DATA: heap and private writable mappings
	MaxProcesses int64 // RLIMIT_NPROC, counted per user: per app when each app has its own uid
	MaxOpenFiles int64 // RLIMIT_NOFILE
	// Prlimit is the path of util-linux prlimit, which sets the limits and then executes the
	// command; empty when the host has none (the command then runs without limits).
	Prlimit string
	// PerAppUIDs gives each app its own uid and gid (UIDBase + a hash of the app id), so apps
	// cannot read each other's trees and the process cap is per app. Only root can do this.
	PerAppUIDs bool
	UIDBase    uint32
	// Fixed, when set, is the one identity every customer process runs as (ZONE_RUN_AS_USER).
	Fixed *syscall.Credential
}

// NewSandbox detects what the host allows.
func NewSandbox(memory, procs, files int64, fixed *syscall.Credential) Sandbox {
	s := Sandbox{MemoryBytes: memory, MaxProcesses: procs, MaxOpenFiles: files, UIDBase: 200000, Fixed: fixed}
	if p, err := exec.LookPath("prlimit"); err == nil {
		s.Prlimit = p
	}
	s.PerAppUIDs = fixed == nil && os.Geteuid() == 0
	return s
}

// Credential is the identity an app's processes run as, or nil for the agent's own.
func (s Sandbox) Credential(appID string) *syscall.Credential {
	if s.Fixed != nil {
		return s.Fixed
	}
	if !s.PerAppUIDs {
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(appID))
	id := s.UIDBase + h.Sum32()%100000
	return &syscall.Credential{Uid: id, Gid: id, NoSetGroups: true}
}

// basePath is the PATH customer processes get: system tools only, nothing of the agent's.
const basePath = "/usr/local/bin:/usr/bin:/bin"

// Environ is the whole environment of a customer process: the deploy's variables, PORT when
// set, and a minimal PATH, HOME and TMPDIR. Nothing of the agent's environment (database
// URL, signing key, Vault token) is inherited.
func Environ(vars map[string]string, dir string, port int) []string {
	env := map[string]string{"PATH": basePath, "HOME": dir, "TMPDIR": dir + "/.tmp", "LANG": "C.UTF-8"}
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

// Command makes a command for argv in dir. Cancelling ctx kills the whole process group.
func (s Sandbox) Command(ctx context.Context, appID, dir string, argv []string, env []string) *exec.Cmd {
	full := argv
	if s.Prlimit != "" {
		full = append([]string{s.Prlimit,
			"--data=" + strconv.FormatInt(s.MemoryBytes, 10),
			"--nproc=" + strconv.FormatInt(s.MaxProcesses, 10),
			"--nofile=" + strconv.FormatInt(s.MaxOpenFiles, 10),
			"--core=0",
			"--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// The process dies with the agent rather than lingering as an orphan.
		Pdeathsig:  syscall.SIGKILL,
		Credential: s.Credential(appID),
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// ShellCommand runs a manifest command line through /bin/sh -c.
func ShellCommand(line string) []string { return []string{"/bin/sh", "-c", line} }

// StartCommand is ShellCommand for a service's start line. A simple command is exec'd by
// the shell, so the service itself is the agent's child: it then gets the agent's death
// signal and its exit status directly, instead of a shell in between.
func StartCommand(line string) []string {
	// Left to the shell as written: compound lines; a line that execs already (the Procfile
	// habit), which would become "exec exec …"; and one that starts with a variable
	// assignment (NODE_ENV=production node …), which exec would take for a command name.
	// The agent signals the whole process group, so the shell in between costs nothing.
	fields := strings.Fields(line)
	if strings.ContainsAny(line, ";&|()`\n") || len(fields) == 0 || fields[0] == "exec" || strings.Contains(fields[0], "=") {
		return ShellCommand(line)
	}
	return ShellCommand("exec " + line)
}
