package e2e

import (
	"os"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// TestMain removes the service binaries the harness built for this process once every test
// has run.
func TestMain(m *testing.M) {
	code := m.Run()
	harness.RemoveBinaries()
	os.Exit(code)
}
