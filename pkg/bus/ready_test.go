package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

// Ready, the probe behind /readyz, fails as soon as the broker goes away and answers again
// once it is back.
func TestReadyFollowsTheBrokerLink(t *testing.T) {
	cfg, proxy := viaProxy(t, testConfig(t))
	conn := dial(t, cfg)
	ctx := context.Background()
	// Dial returns with the link made; the supervisor marks it up a moment later.
	eventually(t, 5*time.Second, "Ready once connected", func() bool { return conn.Ready(ctx) == nil })
	proxy.Down()
	eventually(t, 5*time.Second, "Ready to fail with the broker gone", func() bool {
		return errors.Is(conn.Ready(ctx), bus.ErrDisconnected)
	})
	proxy.Up()
	eventually(t, 15*time.Second, "Ready again with the broker back", func() bool {
		return conn.Ready(ctx) == nil
	})
}
