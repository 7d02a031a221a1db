package supervisor

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
)

// hostNetwork tells whether a command line asks for the host's network in any spelling
// docker or podman accepts.
func hostNetwork(argv []string) bool {
	for i, a := range argv {
		switch {
		case (a == "--network" || a == "--net") && i+1 < len(argv) && argv[i+1] == "host",
			a == "--network=host", a == "--net=host":
			return true
		}
	}
	return false
}

// leftover is a service container as an earlier agent left it, fully sandboxed, on a
// network of its own.
func leftover(t *testing.T, cli imageruntime.CLI, name, image string) imageruntime.Container {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	network := imageruntime.AppNetworkOf("leftover")
	if err := cli.EnsureNetwork(context.Background(), network); err != nil {
		t.Fatal(err)
	}
	return imageruntime.Container{Name: name, Image: imageruntime.LocalImage(image), Network: network.Name, Port: port, UID: 1000, GID: 1000, Volume: t.TempDir(),
		MemoryBytes: 1 << 20, CPUs: 1, PidsLimit: 10, TmpBytes: 1 << 20}
}

// checkSandboxedRun holds a `run` command line of rev's container to the sandbox's
// promise, flag for flag: written out here rather than built with runArgs, so a change to
// runArgs shows.
func checkSandboxedRun(t *testing.T, r *rig, got []string, rev revision.Revision, name string, port int, args []string) {
	t.Helper()
	uid, gid := uint32(nobody), uint32(nobody)
	if cred := r.l.Source.Sandbox.Credential(rev.AppID); cred != nil {
		uid, gid = cred.Uid, cred.Gid
	}
	if uid == 0 {
		t.Fatal("the app's uid is root")
	}
	mode := "--rm"
	if port > 0 {
		mode = "-d"
	}
	volume := filepath.Join(r.l.Identities.AppsDir, rev.AppID, rev.DeployID, "volumes", name)
	want := []string{"run", mode, "--name", name,
		"--pull", "never",
		"--network", "tori-app-" + rev.AppID,
		"--user", strconv.Itoa(int(uid)) + ":" + strconv.Itoa(int(gid)),
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--read-only",
		"--volume", volume + ":/data:rw",
		"--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777,size=67108864",
		"--env-file", "ENVFILE"}
	if port > 0 {
		want = append(want, "-e", "PORT=8080", "-p", "127.0.0.1:"+strconv.Itoa(port)+":8080")
	}
	want = append(want, "--memory", "1073741824", "--memory-swap", "1073741824", "--cpus", "0.5", "--pids-limit", "256", imageruntime.LocalImage(rev.Image))
	want = append(want, args...)
	i := slices.Index(got, "--env-file")
	if i < 0 || i+1 >= len(got) || !strings.HasPrefix(got[i+1], r.l.Image.Containers.(imageruntime.CLI).EnvDir+"/") {
		t.Fatalf("no private env-file in %q", got)
	}
	got = slices.Clone(got)
	got[i+1] = "ENVFILE"
	if !slices.Equal(got, want) {
		t.Fatalf("run\n got %q\nwant %q", got, want)
	}
	if hostNetwork(got) {
		t.Fatalf("host network: %q", got)
	}
	if info, err := os.Stat(volume); err != nil || info.Mode().Perm() != 0o700 || info.Sys().(*syscall.Stat_t).Uid != uid {
		t.Fatalf("the volume %s is not the app's alone: %v %v", volume, info, err)
	}
}

// A container missing any part of the sandbox is never run: the CLI is not even called.
func TestContainerWithoutItsSandboxIsRefused(t *testing.T) {
	eng := newFakeEngine(t)
	full := imageruntime.Container{Name: "c", Image: "img", Network: "tori-app-x", UID: 1000, GID: 1000, Volume: t.TempDir(), MemoryBytes: 1 << 20, CPUs: 1, PidsLimit: 10, TmpBytes: 1 << 20}
	for name, mutate := range map[string]func(*imageruntime.Container){
		"root uid":      func(c *imageruntime.Container) { c.UID = 0 },
		"root gid":      func(c *imageruntime.Container) { c.GID = 0 },
		"no volume":     func(c *imageruntime.Container) { c.Volume = "" },
		"no memory":     func(c *imageruntime.Container) { c.MemoryBytes = 0 },
		"no cpu":        func(c *imageruntime.Container) { c.CPUs = 0 },
		"no pids":       func(c *imageruntime.Container) { c.PidsLimit = 0 },
		"no tmp limit":  func(c *imageruntime.Container) { c.TmpBytes = 0 },
		"no network":    func(c *imageruntime.Container) { c.Network = "" },
		"the host's":    func(c *imageruntime.Container) { c.Network = "host" },
		"shared bridge": func(c *imageruntime.Container) { c.Network = "bridge" },
	} {
		t.Run(name, func(t *testing.T) {
			c := full
			mutate(&c)
			if err := eng.cli.Run(context.Background(), c, io.Discard); !errors.Is(err, imageruntime.ErrUnconfined) {
				t.Fatalf("Run: %v", err)
			}
			if _, err := eng.cli.RunDetached(context.Background(), c); !errors.Is(err, imageruntime.ErrUnconfined) {
				t.Fatalf("RunDetached: %v", err)
			}
		})
	}
	if calls := eng.calls(); len(calls) != 0 {
		t.Fatalf("the CLI was called: %q", calls)
	}
}

// The fake engine fails a container put on the host's network or the shared default
// bridge, as the zone must never ask, and one it would have to pull.
func TestFakeRuntimeRefusesHostNetwork(t *testing.T) {
	eng := newFakeEngine(t)
	image := pushTestImage("host-network", "")
	if err := eng.cli.Pull(context.Background(), image, io.Discard); err != nil {
		t.Fatal(err)
	}
	img := imageruntime.LocalImage(image)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--network", "bridge", "--pull", "never"}, "--network bridge"},
		{[]string{"--network", "tori-app-unknown", "--pull", "never"}, "not found"},
		{[]string{"--pull", "never"}, "needs --network"},
	} {
		args := append(append([]string{"run", "-d", "--name", "x"}, tc.args...), "-p", "127.0.0.1:1:8080", img)
		out, err := exec.Command(eng.cli.Path, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), tc.says) {
			t.Fatalf("%q: %v: %s", tc.args, err, out)
		}
	}
	if out, err := exec.Command(eng.cli.Path, "pull", image).CombinedOutput(); err == nil || !strings.Contains(string(out), "never dials a registry") {
		t.Fatalf("pull: %v: %s", err, out)
	}
	os.Remove(filepath.Join(eng.state, "argv.log"))
	out, err := exec.Command(eng.cli.Path, "run", "-d", "--name", "x", "--network", "host", "--pull", "never", "-p", "127.0.0.1:1:8080", img).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "--network host") {
		t.Fatalf("%v: %s", err, out)
	}
	if len(eng.containers()) != 0 {
		t.Fatal("a container runs")
	}
	// The calls log keeps it: hostNetwork, which every image test's cleanup runs, sees it.
	if calls := eng.callsStarting("run"); len(calls) != 1 || !hostNetwork(calls[0]) {
		t.Fatalf("calls: %q", calls)
	}
	os.Remove(filepath.Join(eng.state, "argv.log")) // not to fail this test's own cleanup
}

// Each start of a container gets a fresh writable folder: what a container wrote does not
// outlive it, as with a process's tree.
func TestContainerVolumeIsFreshAndTheApps(t *testing.T) {
	r, _ := imageRig(t)
	rev := imageRevision(uuid.NewString(), "c", nil)
	uid, gid := r.l.Image.containerUser(rev.AppID)
	dir, err := r.l.Image.containerVolume(rev, "tori-x", uid, gid)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "left"), []byte("x"), 0o600)
	again, err := r.l.Image.containerVolume(rev, "tori-x", uid, gid)
	if err != nil || again != dir {
		t.Fatal(again, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "left")); !os.IsNotExist(err) {
		t.Fatal("a file survived into the next container")
	}
	if uid == 0 || gid == 0 {
		t.Fatalf("containers would run as %d:%d", uid, gid)
	}
	if cred := r.l.Source.Sandbox.Credential(rev.AppID); cred != nil && (cred.Uid != uid || cred.Gid != gid) {
		t.Fatalf("containers run as %d:%d, the app's processes as %d:%d", uid, gid, cred.Uid, cred.Gid)
	}
}
