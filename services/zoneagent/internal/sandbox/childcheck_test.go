package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"
)

// bubblewrap's info descriptor is written by a process of the app's uid. A false child pid
// there (a host process, the app's own network holder, the agent's child) is refused, and
// no host process is moved into the app's cgroup, whether the report comes for a sandbox or
// for the app's network holder.
func TestFalseChildPidIsRefused(t *testing.T) {
	sb := testSandbox(t)
	ctx := context.Background()
	app := uuid.NewString()
	sb.SetUID(app, testUIDBase+990)
	t.Cleanup(func() { sb.ReleaseNetwork(app); sb.Cgroups.Remove(app); sb.ForgetUID(app) })
	if _, err := sb.Network(ctx, app); err != nil {
		t.Fatal(err)
	}
	cred := sb.Credential(app)
	dir, err := os.MkdirTemp("", "tori-false-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chown(dir, int(cred.Uid), int(cred.Gid))

	// Host processes a hostile report might name: one of the app's own uid, one of root.
	sleeper := func(asApp bool) int {
		cmd := exec.Command("/usr/bin/sleep", "300")
		if asApp {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	sb.ids.netMu.Lock()
	holder := sb.ids.nets[app].net.holderPID
	sb.ids.netMu.Unlock()
	victims := map[string]int{"a host process of the app's uid": sleeper(true), "a host process of root": sleeper(false), "the app's network holder": holder}

	inAppGroup := func(pid int) bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		return strings.Contains(string(b), app)
	}
	for name, victim := range victims {
		if name != "the app's network holder" && inAppGroup(victim) {
			t.Fatalf("%s is in the app's group before the test", name)
		}
		t.Run(name, func(t *testing.T) {
			// What the object in bubblewrap once did: write the info descriptor first.
			wdir, err := os.MkdirTemp("", "tori-hostile-bwrap-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(wdir) })
			os.Chmod(wdir, 0o755)
			wrapper := filepath.Join(wdir, "bwrap")
			body := fmt.Sprintf("#!/bin/sh\nprintf '{\"child-pid\": %d}\\n' >&3\nexec %s \"$@\"\n", victim, sb.Bwrap)
			if err := os.WriteFile(wrapper, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			hostile := sb
			hostile.Bwrap = wrapper
			_, err = hostile.Start(ctx, Spec{AppID: app, Dir: dir, Argv: []string{"/bin/sleep", "30"}, Env: Environ(nil, 0)})
			if !errors.Is(err, ErrFalseChild) {
				t.Fatalf("a sandbox reporting %s (pid %d) started: %v", name, victim, err)
			}
			if name != "the app's network holder" && inAppGroup(victim) {
				t.Fatalf("%s was moved into the app's group", name)
			}
			// The same report from a network holder of a new app.
			other := uuid.NewString()
			hostile.SetUID(other, cred.Uid+1)
			t.Cleanup(func() { hostile.ReleaseNetwork(other); hostile.Cgroups.Remove(other); hostile.ForgetUID(other) })
			if _, err := hostile.Network(ctx, other); !errors.Is(err, ErrFalseChild) {
				t.Fatalf("a network holder reporting %s (pid %d) was kept: %v", name, victim, err)
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", victim))
			if strings.Contains(string(b), other) {
				t.Fatalf("%s was moved into the new app's group", name)
			}
		})
	}
	// The real bubblewrap's report passes the same check.
	done, err := sb.Start(ctx, Spec{AppID: app, Dir: dir, Argv: []string{"/bin/true"}, Env: Environ(nil, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := done.Wait(); err != nil {
		t.Fatal(err)
	}
}
