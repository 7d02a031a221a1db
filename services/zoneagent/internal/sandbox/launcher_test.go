package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The sandbox's hard limits are set by the launcher (prlimit) before bubblewrap runs: inside,
// the app reads 1,024 open files and no core dumps, soft and hard, and cannot raise either;
// the app's variables are in the app's environment and in no environment of the host-side
// chain (prlimit, nsenter, bubblewrap, all one pid), where LD_PRELOAD would run the
// customer's code outside the sandbox.
func TestLimitsAreSetBeforeTheSandbox(t *testing.T) {
	sb := testSandbox(t)
	app := uuid.NewString()
	sb.SetUID(app, testUIDBase+998)
	t.Cleanup(func() { sb.ForgetUID(app); sb.Cgroups.Remove(app); sb.ReleaseNetwork(app) })
	dir, err := os.MkdirTemp("", "tori-limits-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)

	mark := "tori-app-variable-" + uuid.NewString()
	script := `grep -E "open files|core file" /proc/self/limits
ulimit -H -n 4096 2>/dev/null && echo raised-nofile
ulimit -H -c unlimited 2>/dev/null && echo raised-core
echo "env:$APP_MARK"
echo ready; exec sleep 60`
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := sb.Start(ctx, Spec{AppID: app, Dir: dir, Argv: []string{"/bin/sh", "-c", script},
		Env: Environ(map[string]string{"APP_MARK": mark, "LD_PRELOAD": "/app/none.so"}, 0), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	deadline := time.Now().Add(30 * time.Second)
	// The app sleeps once it has said all: bubblewrap is still there to be read.
	for !strings.Contains(out.String(), "ready") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid()))
	if err != nil {
		t.Fatalf("bubblewrap's environment: %v", err)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid()))
	if !bytes.Contains(cmdline, []byte("bwrap")) {
		t.Fatalf("pid %d is not bubblewrap: %q", p.Pid(), cmdline)
	}
	if bytes.Contains(environ, []byte(mark)) || bytes.Contains(environ, []byte("LD_PRELOAD")) {
		t.Errorf("bubblewrap's environment holds the app's variables: %q", environ)
	}
	p.Kill()
	got := out.String()
	for _, want := range []string{"env:" + mark, "Max open files            1024                 1024", "Max core file size        0                    0"} {
		if !strings.Contains(got, want) {
			t.Errorf("the app's output lacks %q:\n%s", want, got)
		}
	}
	for _, raised := range []string{"raised-nofile", "raised-core"} {
		if strings.Contains(got, raised) {
			t.Errorf("the app %s:\n%s", raised, got)
		}
	}
}
