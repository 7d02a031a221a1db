//go:build brokerrestart

package bus_test

import (
	"os/exec"
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

// The same as TestOutboxSurvivesConnectionCuts across a real broker restart. It stops the
// shared broker, so it runs alone: `make test` runs it by itself after everything else.
func TestBrokerRestart(t *testing.T) {
	cfg := testConfig(t)
	deliverUnderFaults(t, cfg, 10000, func(t *testing.T, conn *bus.Conn) {
		time.Sleep(time.Second)
		rabbitmqctl(t, "stop_app")
		t.Log("broker app stopped")
		eventually(t, 10*time.Second, "Connected to report the loss", func() bool { return !conn.Connected() })
		time.Sleep(2 * time.Second)
		rabbitmqctl(t, "start_app")
		t.Log("broker app restarted")
		eventually(t, 30*time.Second, "reconnect", conn.Connected)
	})
}

func rabbitmqctl(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("rabbitmqctl", args...).CombinedOutput()
	if err != nil {
		// Leave the broker running for whatever comes next, whatever happened here.
		exec.Command("rabbitmqctl", "start_app").Run()
		t.Fatalf("rabbitmqctl %v: %v\n%s", args, err, out)
	}
}
