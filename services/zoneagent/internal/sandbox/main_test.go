package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the sandboxes' launcher, as the agent's binary is
// (launcher.go: a sandbox starts through /proc/self/exe).
func TestMain(m *testing.M) {
	RunLauncher()
	os.Exit(m.Run())
}
