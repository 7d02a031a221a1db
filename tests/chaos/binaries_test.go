//go:build chaos

package chaos

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
