package runas

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"
)

// status is the child's /proc/self/status as Command starts it, by field.
func status(t *testing.T, u User, caps []string) map[string]string {
	t.Helper()
	cmd, err := Command(u, caps, "/bin/cat", "/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}

// A process started as a zone user is that user with no groups, no_new_privs, and of the
// capabilities exactly those named, in every set (the bounding set too, so nothing it runs
// regains one).
func TestCommandDropsToTheUserAndItsCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the zone's tests run as root (the agent starts its processes as other users)")
	}
	u, err := Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		caps []string
		mask string
	}{
		{"none (the database host)", nil, "0000000000000000"},
		{"binding low ports (the edge)", []string{"net_bind_service"}, "0000000000000400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status(t, u, tc.caps)
			id := strconv.Itoa(u.UID)
			if st["Uid"] != strings.Join([]string{id, id, id, id}, "\t") {
				t.Errorf("Uid %q, want %s in every place", st["Uid"], id)
			}
			if st["Groups"] != "" {
				t.Errorf("Groups %q, want none", st["Groups"])
			}
			if st["NoNewPrivs"] != "1" {
				t.Errorf("NoNewPrivs %q", st["NoNewPrivs"])
			}
			for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if st[set] != tc.mask {
					t.Errorf("%s %s, want %s", set, st[set], tc.mask)
				}
			}
		})
	}
}

// root is never a zone process's user: that would undo the split.
func TestLookupRefusesRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the zone's tests run as root")
	}
	if _, err := Lookup("root"); !errors.Is(err, ErrRoot) {
		t.Fatalf("Lookup(root): %v, want ErrRoot", err)
	}
	if _, err := Lookup("Tori No Such User"); err == nil {
		t.Fatal("a user with no system user's name was found or made")
	}
}

// A root agent makes a missing user a system user (no home, no shell) rather than refusing
// to start its processes.
func TestLookupMakesAMissingUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the zone's tests run as root")
	}
	name := "tori-runas-test"
	exec.Command("userdel", name).Run() // a run killed before its cleanup
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if u.UID == 0 || u.GID == 0 || u.Self || u.Name != name {
		t.Fatalf("made %+v", u)
	}
	pw, err := user.Lookup(name)
	if err != nil || pw.HomeDir != "/nonexistent" {
		t.Fatalf("the made user: %+v, %v", pw, err)
	}
	again, err := Lookup(name)
	if err != nil || again.UID != u.UID {
		t.Fatalf("a second lookup: %+v, %v", again, err)
	}
}

// An agent that is not root has no user to change to: the process is the binary itself.
func TestCommandForTheAgentsOwnUser(t *testing.T) {
	cmd, err := Command(User{Name: "dev", UID: 1000, GID: 1000, Self: true}, []string{"net_bind_service"}, "/bin/true", "x")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cmd.Args, " ") != "/bin/true x" {
		t.Fatalf("args %q", cmd.Args)
	}
}
