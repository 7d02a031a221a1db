package testinfra

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// runUntilCleanup starts bin in a process group of its own, its output in logf, stopped when
// the test ends (SIGTERM, then SIGKILL after 10 s), and returns a channel closed when it
// exits. env nil inherits the test's environment.
func runUntilCleanup(t testing.TB, bin string, env []string, logf *os.File, args ...string) chan struct{} {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(bin), err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// awaitUp asks ready every 100 ms until it says yes, and fails the test with name's log when
// the process exits first or within passes.
func awaitUp(t testing.TB, name string, exited <-chan struct{}, logf *os.File, within time.Duration, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ready() {
		select {
		case <-exited:
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("%s exited before answering:\n%s", name, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("%s did not answer within %s:\n%s", name, within, out)
		}
	}
}
