package bus_test

import (
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

// Ten thousand events through the outbox while the proxy between this process and the broker
// drops every connection (Cut) or refuses them for a while (Down/Up), several times: each event
// is consumed, each with exactly one effect.
func TestOutboxSurvivesConnectionCuts(t *testing.T) {
	t.Parallel()
	cfg, proxy := viaProxy(t, testConfig(t))
	deliverUnderFaults(t, cfg, 10000, func(t *testing.T, conn *bus.Conn) {
		for i := range 6 {
			time.Sleep(500 * time.Millisecond)
			if i%2 == 0 {
				t.Logf("fault %d: cut", i+1)
				proxy.Cut()
				continue
			}
			t.Logf("fault %d: down", i+1)
			proxy.Down()
			eventually(t, 10*time.Second, "Connected to report the loss", func() bool { return !conn.Connected() })
			time.Sleep(700 * time.Millisecond)
			proxy.Up()
			eventually(t, 15*time.Second, "reconnect", conn.Connected)
		}
	})
}
