package apptest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
)

// BusConfig is testinfra's bus configuration, with the request timeout the apps tests use.
func BusConfig(t testing.TB) bus.Config {
	t.Helper()
	cfg := testinfra.BusConfig(t)
	cfg.RequestTimeout = 3 * time.Second
	return cfg
}

// Dial connects to the test broker; the connection closes when the test ends.
func Dial(t testing.TB, cfg bus.Config, log *slog.Logger) *bus.Conn {
	t.Helper()
	return testinfra.DialBus(t, cfg, log)
}

// WaitQueue waits until the broker has the (namespaced) queue: events published before a
// consumer's queue is bound go nowhere.
func WaitQueue(t testing.TB, cfg bus.Config, name string) {
	t.Helper()
	Eventually(t, 20*time.Second, "queue "+name, func() bool {
		ac, err := amqp.Dial(cfg.URL)
		if err != nil {
			return false
		}
		defer ac.Close()
		ch, err := ac.Channel()
		if err != nil {
			return false
		}
		_, err = ch.QueueDeclarePassive(cfg.Namespace+name, false, false, false, false, nil)
		return err == nil
	})
}

// Eventually polls cond until it holds, failing the test after within.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testinfra.Eventually(t, within, what, cond)
}

// Go runs fn in the background until the test ends, then checks it returned nil.
func Go(t testing.TB, name string, fn func(ctx context.Context) error) {
	t.Helper()
	testinfra.Background(t, name, fn)
}
