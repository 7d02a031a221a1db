// Package bus is the one way Tori's services talk to each other, over RabbitMQ.
//
//   - Events are facts, published to a durable topic exchange through a transactional outbox:
//     Publish writes the event in the caller's pgx transaction, and a Relay publishes committed
//     rows with publisher confirms, marking them sent only once confirmed. Unconfirmed or nacked
//     rows are published again, so delivery is at least once. A run of consecutive events with
//     one routing key travels as one AMQP message, a bundle (bundle.go), which consumers and
//     listeners unpack: each event keeps its own id, attempts and dead letter.
//   - Consumers are idempotent: Consume runs the handler in a transaction that also records the
//     message id in processed_messages; a redelivered message commits nothing twice.
//   - A failing handler is retried with exponential backoff up to Config.MaxAttempts, then the
//     message goes to the dead-letter queue with the reason in its headers; a Permanent error
//     goes there at once. Nothing requeues forever. ReplayDeadLetters sends them back.
//   - Request/reply (Request and Serve) is for the few questions that need an answer now; its
//     messages are transient and never touch a durable queue, so a reply may carry a secret.
//   - The connection redials after a broker restart or a dropped socket, and every consumer,
//     listener and server resubscribes.
//   - W3C trace context travels in the AMQP headers.
//   - Housekeep (or Prune) deletes sent outbox rows and old processed ids; the busctl command
//     (pkg/bus/cmd/busctl) replays dead letters.
//
// Names: exchanges and queues are prefixed with Config.Namespace (empty in production), so
// tests running in parallel on one broker never see each other's messages.
package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
)

// Config is the bus part of every service's configuration.
type Config struct {
	// URL is the broker as one user. Services take theirs from <NAME>_AMQP_URL (WithURL);
	// tools and tests read AMQP_URL.
	URL string `env:"AMQP_URL"`
	// Namespace prefixes every exchange and queue name; tests set a unique one.
	Namespace string `env:"BUS_NAMESPACE"`
	// QueueType is "quorum" (durable, replicated; the default) or "classic".
	QueueType string `env:"BUS_QUEUE_TYPE, default=quorum"`
	// QueueExpires, when set, makes RabbitMQ delete a queue unused for that long (tests).
	QueueExpires time.Duration `env:"BUS_QUEUE_EXPIRES"`
	// MaxAttempts is how many times a consumer tries a message before dead-lettering it.
	MaxAttempts int `env:"BUS_MAX_ATTEMPTS, default=5"`
	// BaseBackoff is the first retry delay; each further retry doubles it (capped at 30s).
	BaseBackoff time.Duration `env:"BUS_BASE_BACKOFF, default=200ms"`
	// RequestTimeout bounds Request when the context has no earlier deadline.
	RequestTimeout time.Duration `env:"BUS_REQUEST_TIMEOUT, default=5s"`
	// AcceptAnyPublisher turns off the publisher checks: events are handled whoever sent
	// them and requests answered whoever asked. Only for a test that stands in for several
	// services on one connection; no environment variable sets it, so no service can.
	AcceptAnyPublisher bool
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.URL == "" {
		return errors.New("the broker URL (<NAME>_AMQP_URL, written by bin/bootstrap) is required")
	}
	if c.QueueType != "quorum" && c.QueueType != "classic" {
		return fmt.Errorf("BUS_QUEUE_TYPE must be quorum or classic, not %q", c.QueueType)
	}
	if c.MaxAttempts < 1 {
		return errors.New("BUS_MAX_ATTEMPTS must be at least 1")
	}
	if c.BaseBackoff < 0 || c.RequestTimeout < 0 || c.QueueExpires < 0 {
		return errors.New("BUS_BASE_BACKOFF, BUS_REQUEST_TIMEOUT and BUS_QUEUE_EXPIRES must not be negative")
	}
	return nil
}

// withDefaults fills the zero values a Config built in code (rather than loaded from the
// environment, which applies the tags' defaults) would otherwise leave unusable.
func (c Config) withDefaults() Config {
	if c.QueueType == "" {
		c.QueueType = "quorum"
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 5
	}
	if c.BaseBackoff == 0 {
		c.BaseBackoff = 200 * time.Millisecond
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 5 * time.Second
	}
	return c
}

// Delivery is one received message.
type Delivery struct {
	ID         string // the message id set at publish; the idempotency key
	RoutingKey string
	Type       string // the protobuf full name of the body
	Body       []byte
	Attempt    int // 1 on the first try
	// Publisher is the principal that published it ("apps", "zone.eu-1"), from the user_id
	// the broker vouches for; "" when it names none. An event reaches a handler only from
	// the principal that owns its routing key.
	Publisher string
}

// Decode unmarshals the body into m and checks that every id it carries is a UUID; a message
// that fails either is worth no retry (wrap it with Permanent).
func (d Delivery) Decode(m proto.Message) error {
	if err := proto.Unmarshal(d.Body, m); err != nil {
		return err
	}
	return checkIDs(m.ProtoReflect())
}

// DecodeEach unmarshals the body into m without Decode's id check, for a handler that checks
// every id itself item by item, so that one bad item does not cost the good ones (a log
// batch keeps its good lines).
func (d Delivery) DecodeEach(m proto.Message) error { return proto.Unmarshal(d.Body, m) }

// TxHandler applies a message's effect inside tx, bound by the service's store (its Bind);
// Consume commits tx together with the record that the message was processed.
type TxHandler func(ctx context.Context, tx Tx, d Delivery) error

// Subscription is a durable consumer of events.
type Subscription struct {
	Queue  string   // durable queue name, e.g. "identity.plans"; Namespace is prefixed
	Keys   []string // routing-key patterns on the events exchange, e.g. "billing.account.*"
	Handle TxHandler
	// Prefetch is how many unacknowledged messages (a bundle is one) may be in flight;
	// default 16. The broker stops delivering at that many, and each stays unacknowledged
	// until its batch commits, so a consumer that must keep up with bursts wants a window that
	// covers the rate times a commit's wait (bench-bus uses 512). 1 handles messages one at a
	// time, in order (with Batch, a bundle's events in one transaction, in order).
	Prefetch int
	// Batch lets a worker under load handle what has already arrived (up to Prefetch
	// deliveries, about a hundred events) in one transaction: one commit instead of one an
	// event, for a subscription whose rate matters more than its events' independence (the
	// logs service's ingest). A failed batch is rolled back and its events handled one by
	// one. Without it every event has a transaction of its own.
	Batch bool
	// Ready, when set, is called each time the queue, its bindings and the consumer are in
	// place (after every resubscribe too). An event published before its queue is bound is
	// routed nowhere, so whoever must not miss the first events waits for this.
	Ready func()
}

// Responder answers one request.
type Responder func(ctx context.Context, d Delivery) (proto.Message, error)

var (
	// ErrTimeout means no answer came in time.
	ErrTimeout = errors.New("bus: request timed out")
	// ErrNoResponder means the broker had no queue to route a request to: no Serve for that
	// queue has run since the broker started.
	ErrNoResponder = errors.New("bus: no responder for request queue")
	// ErrClosed is returned by calls on a Conn after Close, and by Consume, Listen, Serve and
	// Relay.Run when the Conn closes under them.
	ErrClosed = errors.New("bus: connection closed")
)

// RemoteError is a responder's refusal, as the requester sees it.
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string { return "bus: remote: " + e.Code + ": " + e.Message }

// Reject builds a responder error that reaches the requester with code and message.
func Reject(code, message string) error { return &RemoteError{Code: code, Message: message} }

// Permanent marks a handler error as not worth retrying: the message is dead-lettered at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ error }

func (p permanentError) Unwrap() error { return p.error }

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// WithURL is c connecting as url: a service's own broker user, from its <NAME>_AMQP_URL.
func (c Config) WithURL(url string) Config {
	c.URL = url
	return c
}
