package testinfra

import (
	"os"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The names pkg/bus declares once per namespace (see its topology). Callers put either ns or
// ns+"." in front of them.
var (
	busExchanges = []string{"tori.events", "tori.dlx"}
	busQueues    = []string{"tori.dead-letter"}
)

// removeBusNames deletes a finished test's bus exchanges and dead-letter queue. It is
// best-effort: a name that was never declared is simply not there.
func removeBusNames(ns string) {
	url := amqpURL
	if url == "" {
		url = os.Getenv("TEST_AMQP_URL")
	}
	if url == "" {
		return // no test here dialled a broker
	}
	conn, err := amqp.Dial(url)
	if err != nil {
		return
	}
	defer conn.Close()
	// A missing name closes the channel it was asked on, so each deletion gets its own.
	do := func(f func(ch *amqp.Channel) error) {
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		if f(ch) == nil {
			ch.Close()
		}
	}
	for _, prefix := range []string{ns + ".", ns} {
		for _, x := range busExchanges {
			do(func(ch *amqp.Channel) error { return ch.ExchangeDelete(prefix+x, false, false) })
		}
		for _, q := range busQueues {
			do(func(ch *amqp.Channel) error { _, err := ch.QueueDelete(prefix+q, false, false, false); return err })
		}
	}
}
