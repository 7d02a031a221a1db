package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// LauncherArg is the first argument that makes the agent's own binary the sandbox's
// launcher instead of the agent (RunLauncher). Every sandbox starts through it.
const LauncherArg = "tori-sandbox-launch"

// selfExe is the agent's own binary, whatever path it was started by (and even when that
// file was replaced since): the kernel's link to the running image.
const selfExe = "/proc/self/exe"

// ErrLauncherArgs is a launcher started with arguments the agent never gives.
var ErrLauncherArgs = errors.New("sandbox launcher: bad arguments")

// launcherArgs is the launcher's command line: the limits, then the program it becomes
// (nsenter, then bubblewrap) and that program's arguments.
func (p Policy) launcherArgs(program string, args ...string) []string {
	a := []string{LauncherArg, strconv.FormatInt(p.MaxOpenFiles, 10), "--", program}
	return append(a, args...)
}

// RunLauncher is the launcher, when the process was started as one: it sets the sandbox's
// hard limits on itself, then executes the program named, which passes them on to bubblewrap
// and everything bubblewrap starts. It returns only when the process is not a launcher; a
// launcher that cannot do its job exits, and the sandbox does not start.
//
// Why here, and not inside the sandbox: a hard limit is inherited and only a process with
// CAP_SYS_RESOURCE in the host's user namespace raises it, so a limit set before the
// sandbox exists holds whatever the app does. Set inside (prlimit, a dynamically linked
// program run with the customer's environment), a preloaded no-op setrlimit kept the agent's
// own limits. This process is the agent's Go binary, started with the fixed host environment
// (hostEnv): no customer variable exists yet, and none reaches nsenter or bubblewrap either
// (their variables come from bubblewrap's argument descriptor, inside the sandbox only).
// Os/exec has no hook between fork and exec, hence a process of its own.
func RunLauncher() {
	if len(os.Args) < 2 || os.Args[1] != LauncherArg {
		return
	}
	err := launch(os.Args[2:])
	fmt.Fprintln(os.Stderr, "sandbox launcher:", err)
	os.Exit(126)
}

// launch sets the limits and executes the program; it returns only on failure.
func launch(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return ErrLauncherArgs
	}
	nofile, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || nofile == 0 {
		return ErrLauncherArgs
	}
	// Soft and hard alike: the app starts at its ceiling, as prlimit --nofile=N gave it.
	// syscall.Setrlimit (not x/sys/unix's) also tells the Go runtime that the program chose
	// this limit, so the exec below keeps it instead of restoring the one Go started with.
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: nofile, Max: nofile}); err != nil {
		return fmt.Errorf("open files: %w", err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("core size: %w", err)
	}
	program := args[2]
	return syscall.Exec(program, args[2:], hostEnv())
}
