package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// When bubblewrap ends during its set-up (here: the app's tree is a folder its uid cannot
// reach), its own reason is what the start reports. bwrap's first process reads the start
// signal only after its set-up, so the agent's write races the failure: either the write
// finds no reader (the start fails, and used to say only "write |1: broken pipe"), or it
// lands first and the sandbox then exits with the reason on its stderr.
func TestSandboxThatCannotStartSaysWhy(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	ctx := context.Background()
	if err := r.l.Identities.Ensure(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.l.Source.Sandbox.ReleaseNetwork(app); r.l.Source.Sandbox.Cgroups.Remove(app) })
	private := t.TempDir() // 0700, root's
	dir := filepath.Join(private, "tree")
	os.Mkdir(dir, 0o755)
	want := "bwrap: Can't find source path " + dir
	for i := 0; i < 5; i++ {
		var stderr strings.Builder
		sb, err := r.l.Source.Sandbox.Start(ctx, sandbox.Spec{AppID: app, Dir: dir, Argv: []string{"/bin/true"}, Env: sandbox.Environ(nil, 0), Stderr: &stderr})
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "the sandbox did not start: "+want) || strings.Contains(msg, "broken pipe") {
				t.Fatalf("error %q, want bubblewrap's reason", msg)
			}
			continue
		}
		if err := sb.Wait(); err == nil || !strings.Contains(stderr.String(), want) {
			t.Fatalf("a sandbox on a tree its uid cannot reach ended with %v, stderr %q", err, stderr.String())
		}
	}
}
