//go:build chaos

package chaos

import (
	"os"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// TestMain removes the service binaries the harness built for this run once it is done.
func TestMain(m *testing.M) {
	code := m.Run()
	harness.RemoveBinaries()
	os.Exit(code)
}
