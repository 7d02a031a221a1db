package e2e

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

// measureAPI measures the API's routes at the world's current size (issue 41).
func measureAPI(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Fatal("measureAPI: not written yet")
	return nil
}

// measureRetention measures dropping a day of log entries and the API's p99 meanwhile.
func measureRetention(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Fatal("measureRetention: not written yet")
	return nil
}
