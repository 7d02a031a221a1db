// Package runas starts the agent's own binary again as one of the zone's unprivileged users
// (the edge's, the database host's): the root runtime keeps root, and the processes that parse
// visitors' bytes or hold the cluster's connections get only what their job needs.
package runas

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"regexp"
	"strconv"
	"strings"
)

// systemName is what a user the agent makes may be called: Debian's rule for system users.
var systemName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// ErrRoot: the named user is root (uid or gid 0), which would undo the split.
var ErrRoot = errors.New("is root: the process must run unprivileged")

// User is the OS user a process runs as. Self: the agent is not root and runs the process as
// itself (a developer's machine), so there is no user to change to.
type User struct {
	Name     string
	UID, GID int
	Self     bool
}

// Lookup resolves name, or the agent's own user when the agent is not root. A root agent
// makes a missing name a system user first (no home, no login shell, a group of its own), as
// scripts/ensure-services.sh does, so an agent started where that script never ran (another
// harness, a hand-made host) still splits rather than refusing to start.
func Lookup(name string) (User, error) {
	if os.Geteuid() != 0 {
		me := User{Name: strconv.Itoa(os.Getuid()), UID: os.Getuid(), GID: os.Getgid(), Self: true}
		if u, err := user.Current(); err == nil {
			me.Name = u.Username
		}
		return me, nil
	}
	u, err := user.Lookup(name)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) {
		if !systemName.MatchString(name) {
			return User{}, fmt.Errorf("user %q is missing, and is no name to make a system user by (%s)", name, systemName)
		}
		if out, uerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", name).CombinedOutput(); uerr != nil {
			return User{}, fmt.Errorf("user %q is missing and could not be made: %v: %s", name, uerr, strings.TrimSpace(string(out)))
		}
		u, err = user.Lookup(name)
	}
	if err != nil {
		return User{}, fmt.Errorf("user %q: %w (scripts/ensure-services.sh makes it)", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return User{}, fmt.Errorf("user %q has no numeric ids", name)
	}
	if uid == 0 || gid == 0 {
		return User{}, fmt.Errorf("user %q %w", name, ErrRoot)
	}
	return User{Name: name, UID: uid, GID: gid}, nil
}

// Command runs exe with args as u through setpriv (util-linux): no supplementary groups,
// no_new_privs, and of the capabilities only caps (e.g. "net_bind_service"), in the
// inheritable, ambient and bounding sets alike, so neither the process nor anything it runs
// can gain another. For a Self user it is exe itself.
func Command(u User, caps []string, exe string, args ...string) (*exec.Cmd, error) {
	if u.Self {
		return exec.Command(exe, args...), nil
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, fmt.Errorf("setpriv (util-linux) is needed to start a process as %s: %w", u.Name, err)
	}
	set := "-all"
	for _, c := range caps {
		set += ",+" + c
	}
	argv := []string{"--reuid=" + strconv.Itoa(u.UID), "--regid=" + strconv.Itoa(u.GID), "--clear-groups",
		"--inh-caps=" + set, "--bounding-set=" + set}
	if len(caps) > 0 {
		argv = append(argv, "--ambient-caps="+set)
	}
	argv = append(argv, "--no-new-privs", "--", exe)
	return exec.Command(setpriv, append(argv, args...)...), nil
}

// String is the user for logs: its name and ids.
func (u User) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d:%d)", u.Name, u.UID, u.GID)
	if u.Self {
		b.WriteString(", the agent's own")
	}
	return b.String()
}
