package e2e

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

// seedControlPlane grows w to size apps (and cfg.accounts accounts) in the control plane.
// Owned by the control-plane part of issue 41.
func seedControlPlane(b *testing.B, s *harness.Stack, w *scaleWorld, size int) {
	b.Fatal("seedControlPlane: not written yet")
}
