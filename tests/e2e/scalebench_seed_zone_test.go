package e2e

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

// seedZone puts every app of w not yet ZoneSeeded live in the zone (issue 41).
func seedZone(b *testing.B, s *harness.Stack, w *scaleWorld) {
	b.Fatal("seedZone: not written yet")
}
