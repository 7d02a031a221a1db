package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrFalseChild refuses a child pid bubblewrap's info descriptor reported that is not the
// sandbox's first process.
var ErrFalseChild = errors.New("the sandbox reported a process that is not its own")

// sandboxChild is what the first process of a sandbox must be, as the agent knows it
// without asking the sandbox: bubblewrap's info descriptor is written by a process of the
// app's uid, so its child pid is a claim, never a fact, until checked here.
type sandboxChild struct {
	bwrap int    // bubblewrap's pid (the agent's own child)
	uid   uint32 // the app's uid
	// net is the network namespace it must be in (the app's); nil: one of its own, not the
	// host's nor bubblewrap's.
	net *os.File
}

// verifiedChild is a checked first process: a pidfd keeps its number from naming another
// process unnoticed, and its network namespace is opened (the app's, checked).
type verifiedChild struct {
	pid   int
	pidfd int
	netNS *os.File
}

// alive reports whether the checked process still lives: while it does, its pid names it,
// so what was done to that pid meanwhile (moved into a cgroup) was done to it.
func (c *verifiedChild) alive() bool {
	return unix.PidfdSendSignal(c.pidfd, 0, nil, 0) == nil
}

func (c *verifiedChild) close() {
	unix.Close(c.pidfd)
}

// verifyChild checks the child pid bubblewrap reported before root acts on it: it must be
// a child of that bubblewrap, run as the app's uid, and be in user, pid and mount
// namespaces that are neither the host's (the agent's) nor bubblewrap's, and in the
// network namespace want.net (or one of its own). A false pid (any host process, another
// sandbox's) is refused with ErrFalseChild.
func verifyChild(pid int, want sandboxChild) (*verifiedChild, error) {
	if pid <= 1 || pid == want.bwrap || pid == os.Getpid() {
		return nil, fmt.Errorf("%w: pid %d", ErrFalseChild, pid)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: pid %d: %v", ErrFalseChild, pid, err)
	}
	c := &verifiedChild{pid: pid, pidfd: pidfd}
	fail := func(format string, a ...any) (*verifiedChild, error) {
		c.close()
		if c.netNS != nil {
			c.netNS.Close()
		}
		return nil, fmt.Errorf("%w: pid %d: %s", ErrFalseChild, pid, fmt.Sprintf(format, a...))
	}
	ppid, uids, err := processIDs(pid)
	if err != nil {
		return fail("%v", err)
	}
	if ppid != want.bwrap {
		return fail("its parent is %d, not the sandbox's bubblewrap %d", ppid, want.bwrap)
	}
	for _, u := range uids {
		if u != want.uid {
			return fail("it runs as uid %d, not the app's %d", u, want.uid)
		}
	}
	for _, kind := range []string{"user", "pid", "mnt"} {
		ns, err := nsID(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
		if err != nil {
			return fail("%v", err)
		}
		host, err := nsID("/proc/self/ns/" + kind)
		if err != nil {
			return fail("%v", err)
		}
		outer, err := nsID(fmt.Sprintf("/proc/%d/ns/%s", want.bwrap, kind))
		if err != nil {
			return fail("%v", err)
		}
		if ns == host || ns == outer {
			return fail("its %s namespace is not the sandbox's own", kind)
		}
	}
	if c.netNS, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", pid)); err != nil {
		return fail("%v", err)
	}
	got, err := fileNSID(c.netNS)
	if err != nil {
		return fail("%v", err)
	}
	if want.net != nil {
		app, err := fileNSID(want.net)
		if err != nil {
			return fail("%v", err)
		}
		if got != app {
			return fail("it is not in the app's network namespace")
		}
	} else if host, err := nsID("/proc/self/ns/net"); err != nil || got == host {
		return fail("it is in the host's network namespace")
	}
	// Checked while the pidfd held it: if it is still alive, every read above was of it.
	if !c.alive() {
		return fail("it ended while it was checked")
	}
	return c, nil
}

// processIDs reads a process's parent pid and its real, effective, saved and filesystem uids.
func processIDs(pid int) (ppid int, uids []uint32, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, nil, err
	}
	ppid = -1
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			for _, f := range strings.Fields(v) {
				u, err := strconv.ParseUint(f, 10, 32)
				if err != nil {
					return 0, nil, fmt.Errorf("status of %d: %q", pid, line)
				}
				uids = append(uids, uint32(u))
			}
		}
	}
	if ppid < 0 || len(uids) != 4 {
		return 0, nil, fmt.Errorf("status of %d has no PPid or Uid line", pid)
	}
	return ppid, uids, nil
}

// nsKey names a namespace: the device and inode of its file.
type nsKey struct{ dev, ino uint64 }

func nsID(path string) (nsKey, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nsKey{}, err
	}
	return nsKey{uint64(st.Dev), st.Ino}, nil
}

func fileNSID(f *os.File) (nsKey, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nsKey{}, err
	}
	return nsKey{uint64(st.Dev), st.Ino}, nil
}
