package bus

import (
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// names are the broker-side names of one Namespace.
type names struct{ ns string }

func (n names) events() string        { return n.ns + "tori.events" }
func (n names) deadLetterX() string   { return n.ns + "tori.dlx" }
func (n names) deadLetterQ() string   { return n.ns + "tori.dead-letter" }
func (n names) queue(q string) string { return n.ns + q }

// deliveryLimit bounds redeliveries of a message on a quorum queue. In-process retries do not
// count against it (they never return the message); it catches the handler that kills its
// process, which would otherwise be redelivered forever.
const deliveryLimit = 20

// declareShared declares what every process on the bus relies on: the events exchange, the
// dead-letter exchange and its queue. Declaring is idempotent, so every (re)connect does it.
func (c *Conn) declareShared(ac *amqp.Connection) error {
	ch, err := ac.Channel()
	if err != nil {
		return fmt.Errorf("bus: open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare(c.names.events(), amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		return fmt.Errorf("bus: declare exchange %s: %w", c.names.events(), err)
	}
	// Fanout: everything dead-lettered, by us or by the broker (x-delivery-limit), lands in
	// the one queue whatever its routing key.
	if err := ch.ExchangeDeclare(c.names.deadLetterX(), amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return fmt.Errorf("bus: declare exchange %s: %w", c.names.deadLetterX(), err)
	}
	q := c.names.deadLetterQ()
	if _, err := ch.QueueDeclare(q, true, false, false, false, c.durableArgs(false)); err != nil {
		return fmt.Errorf("bus: declare queue %s: %w", q, err)
	}
	if err := ch.QueueBind(q, "", c.names.deadLetterX(), false, nil); err != nil {
		return fmt.Errorf("bus: bind queue %s: %w", q, err)
	}
	return nil
}

// durableArgs are the arguments of a durable queue; consumer queues dead-letter into the
// dead-letter exchange, which the dead-letter queue itself must not.
func (c *Conn) durableArgs(consumer bool) amqp.Table {
	args := amqp.Table{amqp.QueueTypeArg: c.cfg.QueueType}
	c.addExpires(args)
	if consumer {
		args["x-dead-letter-exchange"] = c.names.deadLetterX()
		if c.cfg.QueueType == amqp.QueueTypeQuorum {
			args["x-delivery-limit"] = int32(deliveryLimit)
		}
	}
	return args
}

// transientArgs are the arguments of the queues that must never outlive the broker: request
// queues and listeners' private queues. Quorum queues are always durable, so these are classic.
func (c *Conn) transientArgs() amqp.Table {
	args := amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeClassic}
	c.addExpires(args)
	return args
}

func (c *Conn) addExpires(args amqp.Table) {
	if c.cfg.QueueExpires > 0 {
		args[amqp.QueueTTLArg] = c.cfg.QueueExpires.Milliseconds()
	}
}

// isConfigError reports errors that no amount of redialling fixes: a queue declared before
// with other arguments, or permissions the user lacks.
func isConfigError(err error) bool {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return false
	}
	return ae.Code == amqp.PreconditionFailed || ae.Code == amqp.AccessRefused
}
