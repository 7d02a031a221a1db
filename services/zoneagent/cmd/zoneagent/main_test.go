package main

import (
	"os"
	"testing"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// TestMain lets the test binary be the edge process and the sandboxes' launcher, as the agent's binary is: the
// agent runs in-process here, and its sandboxes start through /proc/self/exe.
func TestMain(m *testing.M) {
	runEdgeIfAsked()
	sandbox.RunLauncher()
	os.Exit(m.Run())
}
