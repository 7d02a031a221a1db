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
// last use, and quick retries. Callers change what their test needs.
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
