package supervisor

import (
	"os"
	"testing"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// TestMain lets the test binary be the sandboxes' launcher, as the agent's binary is
// (sandbox.RunLauncher: a sandbox starts through /proc/self/exe).
func TestMain(m *testing.M) {
	sandbox.RunLauncher()
	os.Exit(m.Run())
}
