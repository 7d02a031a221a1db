package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// Without bubblewrap the sandbox says why, and a source deploy fails with
// sandbox_unavailable instead of running unconfined.
func TestNoBwrapRefusesSourceDeploys(t *testing.T) {
	sb := sandbox.NewSandbox(context.Background(), sandbox.SandboxConfig{
		Zone: testZone, Bwrap: "/nonexistent/bwrap", Pasta: "pasta", Nft: "nft", CgroupMount: "/sys/fs/cgroup",
		UIDBase: testUIDBase, UIDCount: 1000, MemoryBytes: 1 << 30, MaxProcesses: 256, MaxOpenFiles: 1024, DiskBytes: 64 << 20,
	})
	if !strings.Contains(sb.Unavailable, "bubblewrap not found") {
		t.Fatalf("Unavailable = %q", sb.Unavailable)
	}
	r := newRig(t)
	*r.l.Source.Sandbox = sb
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}), nil)
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != sandbox.CodeSandboxUnavailable || !strings.Contains(fe.Message, "bubblewrap") {
		t.Fatalf("got %v", err)
	}
	if _, err := sb.Start(context.Background(), sandbox.Spec{AppID: app}); err == nil {
		t.Fatal("an unavailable sandbox started a command")
	}
}

// The seccomp filter refuses a namespace, a mount and ptrace inside the sandbox, and the
// process has no capability and no_new_privs set.
func TestSandboxPrivileges(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	if err := r.l.Identities.Ensure(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.l.Identities.AppsDir, app) // reachable by the app's uid, as trees are
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cred := r.l.Source.Sandbox.Credential(app)
	if err := chownTree(dir, cred.Uid); err != nil {
		t.Fatal(err)
	}
	defer r.l.Source.Sandbox.Cgroups.Remove(app)
	script := `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
st = open("/proc/self/status").read()
print("caps", [l for l in st.splitlines() if l.startswith(("CapEff", "CapPrm", "NoNewPrivs", "Seccomp:", "Groups"))])
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
print("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
print("ptrace", libc.ptrace(16, 1, 0, 0), ctypes.get_errno())
`
	var out strings.Builder
	sb, err := r.l.Source.Sandbox.Start(context.Background(), sandbox.Spec{AppID: app, Dir: dir, Argv: []string{"/usr/bin/python3", "-c", script}, Env: sandbox.Environ(nil, 0), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"'CapEff:\\t0000000000000000'", "'CapPrm:\\t0000000000000000'", "'NoNewPrivs:\\t1'", "'Seccomp:\\t2'",
		"unshare -1 1", "mount -1 1", "ptrace -1 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "'Groups:\\t '") { // none: the agent's (root's) are not kept
		t.Errorf("supplementary groups leaked:\n%s", got)
	}
}
