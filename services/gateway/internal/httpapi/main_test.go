package httpapi_test

import (
	"context"
	"os"
	"testing"

	"tori.dev/pkg/telemetry"
)

// TestMain installs tracing as the gateway's main does, so spans and trace ids are real.
func TestMain(m *testing.M) {
	stop, err := telemetry.Setup(context.Background(), "gateway-test", "test")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = stop(context.Background())
	os.Exit(code)
}
