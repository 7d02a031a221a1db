// Package bus is the one way Tori's services talk to each other, over RabbitMQ.
//
//   - Events are facts, published to a durable topic exchange through a transactional outbox:
//     Publish writes the event in the caller's pgx transaction, and a Relay publishes committed
//     rows with publisher confirms, marking them sent only once confirmed. Unconfirmed or nacked
//     rows are published again, so delivery is at least once.
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
//
// Names: exchanges and queues are prefixed with Config.Namespace (empty in production), so
// tests running in parallel on one broker never see each other's messages.
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
)

// Config is the bus part of every service's configuration.
type Config struct {
	URL string `env:"AMQP_URL, default=amqp://guest:guest@127.0.0.1:5672/"`
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
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.URL == "" {
		return errors.New("AMQP_URL is required")
	}
	if c.QueueType != "quorum" && c.QueueType != "classic" {
		return fmt.Errorf("BUS_QUEUE_TYPE must be quorum or classic, not %q", c.QueueType)
	}
	if c.MaxAttempts < 1 {
		return errors.New("BUS_MAX_ATTEMPTS must be at least 1")
	}
	return nil
}

// Conn is a connection to the broker that redials by itself.
type Conn struct {
	cfg Config
	log *slog.Logger
}

// Dial connects to the broker and declares the events and dead-letter exchanges and the
// dead-letter queue. It fails when the first connection cannot be made; later losses are
// redialled in the background until Close.
func Dial(ctx context.Context, cfg Config, log *slog.Logger) (*Conn, error) {
	return nil, errors.New("bus: not implemented")
}

// Close stops redialling and closes the connection; running Consume, Listen and Serve calls
// return.
func (c *Conn) Close() error { return nil }

// Connected reports whether the connection is up right now. The gateway trusts its token
// cache only while it is, because revocations arrive over it.
func (c *Conn) Connected() bool { return false }

// Publish writes msg to the outbox in tx, to be published to the events exchange under
// routingKey once tx commits. The trace context of ctx travels with it.
func Publish(ctx context.Context, tx pgx.Tx, routingKey string, msg proto.Message) error {
	return errors.New("bus: not implemented")
}

// Relay publishes committed outbox rows of one service's schema.
type Relay struct{}

// NewRelay makes a relay for the outbox in pool's schema.
func NewRelay(conn *Conn, pool *pgxpool.Pool, log *slog.Logger) *Relay { return &Relay{} }

// Run publishes until ctx ends. It wakes on each commit that wrote an outbox row and polls as
// a fallback. Several relays on one schema (several copies of a service) share the work.
func (r *Relay) Run(ctx context.Context) error { return errors.New("bus: not implemented") }

// Delivery is one received message.
type Delivery struct {
	ID         string // the message id set at publish; the idempotency key
	RoutingKey string
	Type       string // the protobuf full name of the body
	Body       []byte
	Attempt    int // 1 on the first try
}

// Decode unmarshals the body into m.
func (d Delivery) Decode(m proto.Message) error { return proto.Unmarshal(d.Body, m) }

// TxHandler applies a message's effect inside tx; Consume commits tx together with the record
// that the message was processed.
type TxHandler func(ctx context.Context, tx pgx.Tx, d Delivery) error

// Subscription is a durable consumer of events.
type Subscription struct {
	Queue    string   // durable queue name, e.g. "identity.plans"; Namespace is prefixed
	Keys     []string // routing-key patterns on the events exchange, e.g. "billing.account.*"
	Handle   TxHandler
	Prefetch int // unacknowledged messages in flight; default 16
}

// Consume declares sub's queue and bindings and handles messages until ctx ends, across
// reconnects. A message is acknowledged only after its transaction commits.
func (c *Conn) Consume(ctx context.Context, pool *pgxpool.Pool, sub Subscription) error {
	return errors.New("bus: not implemented")
}

// Listen receives events matching keys on a queue of this process's own (exclusive,
// deleted when the process goes), so every instance of a service sees every such event.
// It has no idempotency record: fn must be safe to repeat. Returns when ctx ends.
func (c *Conn) Listen(ctx context.Context, keys []string, fn func(ctx context.Context, d Delivery) error) error {
	return errors.New("bus: not implemented")
}

// Responder answers one request.
type Responder func(ctx context.Context, d Delivery) (proto.Message, error)

// Serve answers requests sent to queue until ctx ends. An error built with Reject reaches the
// caller as a *RemoteError with its code; any other error as code "internal".
func (c *Conn) Serve(ctx context.Context, queue string, handle Responder) error {
	return errors.New("bus: not implemented")
}

// Request sends req to queue and decodes the answer into reply. It gives up with ErrTimeout at
// ctx's deadline or after Config.RequestTimeout, whichever is first.
func (c *Conn) Request(ctx context.Context, queue string, req, reply proto.Message) error {
	return errors.New("bus: not implemented")
}

// ErrTimeout means no answer came in time.
var ErrTimeout = errors.New("bus: request timed out")

// RemoteError is a responder's refusal, as the requester sees it.
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string { return "bus: remote: " + e.Code + ": " + e.Message }

// Reject builds a responder error that reaches the requester with code and message.
func Reject(code, message string) error { return &RemoteError{Code: code, Message: message} }

// Permanent marks a handler error as not worth retrying: the message is dead-lettered at once.
func Permanent(err error) error { return permanentError{err} }

type permanentError struct{ error }

func (p permanentError) Unwrap() error { return p.error }

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// Prune deletes outbox rows sent longer ago than keepSent and processed-message records older
// than keepProcessed. Returns how many rows went.
func Prune(ctx context.Context, pool *pgxpool.Pool, keepSent, keepProcessed time.Duration) (int64, error) {
	return 0, errors.New("bus: not implemented")
}

// ReplayDeadLetters moves up to max dead-lettered messages back to the queue each came from,
// with a fresh attempt count. Returns how many moved.
func (c *Conn) ReplayDeadLetters(ctx context.Context, max int) (int, error) {
	return 0, errors.New("bus: not implemented")
}
