package apptest

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
)

// WaitQueue waits until the broker has the (namespaced) queue: events published before a
// consumer's queue is bound go nowhere.
func WaitQueue(t testing.TB, cfg bus.Config, name string) {
	t.Helper()
	testinfra.Eventually(t, 20*time.Second, "queue "+name, func() bool {
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
