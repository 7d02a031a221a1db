package testinfra

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

// BusConfig is a bus configuration of the test's own: a namespace no other test shares (its
// exchanges go when the test ends), classic queues the broker drops three minutes after their
// last use, and quick retries. It connects as the broker's admin and accepts any publisher,
// because such a test stands in for several services on one connection; a test of who may
// publish what connects as the principals themselves (ServiceAMQPURL) and turns that off.
// Callers change what their test needs.
func BusConfig(t testing.TB) bus.Config {
	t.Helper()
	return bus.Config{
		URL:            AMQPURL(t),
		Namespace:      Namespace(t) + ".",
		QueueType:      "classic",
		QueueExpires:   3 * time.Minute,
		MaxAttempts:    3,
		BaseBackoff:    10 * time.Millisecond,
		RequestTimeout: 2 * time.Second,

		AcceptAnyPublisher: true,
	}
}

// DialBus connects with cfg; the connection closes when the test ends, before the
// namespace's exchanges are deleted.
func DialBus(t testing.TB, cfg bus.Config, log *slog.Logger) *bus.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := bus.Dial(ctx, cfg, log)
	if err != nil {
		t.Fatalf("testinfra: bus dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// DialBusAs connects with cfg as principal's own broker user ("test.tori.<principal>"),
// judging publishers as a service does: what it publishes carries that principal's
// user_id, so a service under test accepts it exactly as it would from the real owner.
func DialBusAs(t testing.TB, cfg bus.Config, principal string, log *slog.Logger) *bus.Conn {
	t.Helper()
	cfg = cfg.WithURL(ServiceAMQPURL(t, principal))
	cfg.AcceptAnyPublisher = false
	return DialBus(t, cfg, log)
}
