package sandbox

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// What bubblewrap is told (its options, the command, the seccomp filter, all through
// descriptors) and what it says before the app starts (startDiag): Start's conversation
// with it.

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

// bwrapOptions lays out what the sandbox sees, and its whole environment; they are read
// from a descriptor (bwrapArgsFile), never from a command line.
func (s *Sandbox) bwrapOptions(uid uint32, spec Spec) []string {
	id := strconv.FormatUint(uint64(uid), 10)
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", id, "--gid", id, "--hostname", "app",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--info-fd", "3", "--block-fd", "4", "--seccomp", "5",
		"--clearenv",
	}
	if s.Init != "" {
		a = append(a, "--as-pid-1") // the init is the command's first word (command)
	}
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			a = append(a, "--setenv", k, v)
		}
	}
	return append(a, s.mounts(spec.Dir, spec.BuildCache)...)
}

// command is what bwrap executes inside: tini as the namespace's first process (pid 1,
// --as-pid-1: it reaps orphans and passes signals on), then the app's argv. The limits are
// set before, by the launcher (launcher.go), where no variable of the app exists.
// bubblewrap's own first process would hold bubblewrap's memory, its arguments and the
// host's mount table among it, readable through /proc/1/mem to a process of the same uid;
// tini is executed afresh and knows nothing of the host. The command stays on bwrap's
// command line (bubblewrap 0.8 reads only options from --args), so it holds no host path
// and no variable's value.
func (s *Sandbox) command(spec Spec) []string {
	var a []string
	if s.Init != "" {
		a = append(a, s.Init, "--")
	}
	return append(a, spec.Argv...)
}

// bwrapArgsFile is an anonymous memory file holding args NUL-separated, at offset 0, for
// bwrap's --args: no size limit as a pipe has, and no name on any filesystem.
func bwrapArgsFile(args []string) (*os.File, error) {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return memFile("tori-sandbox-args", []byte(b.String()))
}

// memFile is an anonymous memory file holding data, at offset 0.
func memFile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
