package main

import (
	"os"
	"testing"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// TestMain lets the test binary be what the agent's binary is: the edge process, the
// sandboxes' launcher and the database host. The agent runs in-process here, and starts
// those through /proc/self/exe.
func TestMain(m *testing.M) {
	runEdgeIfAsked()
	sandbox.RunLauncher()
	runDatabaseHost()
	os.Exit(m.Run())
}
