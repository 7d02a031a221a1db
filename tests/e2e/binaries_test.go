package e2e

import (
	"testing"

	"tori.dev/tests/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
