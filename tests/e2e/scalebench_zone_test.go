package e2e

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

// measureEdge measures the edge: a static site, and a napping service's wake (issue 41).
func measureEdge(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Fatal("measureEdge: not written yet")
	return nil
}

// measureRestart restarts the zone agent and measures until it serves again.
func measureRestart(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Fatal("measureRestart: not written yet")
	return nil
}

// measureMemory measures the host memory a napping app costs.
func measureMemory(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Fatal("measureMemory: not written yet")
	return nil
}
