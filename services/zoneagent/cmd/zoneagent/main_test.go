package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary be what the agent's binary is: the edge process and the
// database host. The agent runs in-process here, and starts those through /proc/self/exe.
func TestMain(m *testing.M) {
	runEdgeIfAsked()
	runDatabaseHost()
	os.Exit(m.Run())
}
