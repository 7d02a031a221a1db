package main

import (
	"os"
	"testing"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// TestMain lets the test binary be the sandboxes' launcher, as the agent's binary is: the
// agent runs in-process here, and its sandboxes start through /proc/self/exe; and its
// database host, started the same way.
func TestMain(m *testing.M) {
	sandbox.RunLauncher()
	runDatabaseHost()
	os.Exit(m.Run())
}
