package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Conn is a connection to the broker that redials by itself.
//
// One AMQP connection carries every channel of the process; a supervisor goroutine watches it
// and redials after a loss, and everything built on it (consumers, listeners, servers, the
// relay, requests) reopens its own channel through Conn.channel once the new link is up.
type Conn struct {
	cfg   Config
	user  string       // the broker user: the user_id of everything this Conn publishes
	base  *slog.Logger // the caller's logger, for the relay to tag differently
	log   *slog.Logger
	names names

	mu   sync.Mutex
	amqp *amqp.Connection // nil while down
	up   chan struct{}    // closed while amqp is usable; replaced when it drops

	connected atomic.Bool
	closing   chan struct{}
	closeOnce sync.Once
	done      chan struct{} // the supervisor has exited

	rpc *requester
}

const (
	dialTimeout = 5 * time.Second
	heartbeat   = 10 * time.Second
)

// Dial connects to the broker and declares the events and dead-letter exchanges and the
// dead-letter queue. It fails when the first connection cannot be made; later losses are
// redialled in the background until Close.
func Dial(ctx context.Context, cfg Config, log *slog.Logger) (*Conn, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	user, err := userOf(cfg.URL)
	if err != nil {
		return nil, err
	}
	c := &Conn{
		cfg:     cfg,
		user:    user,
		base:    log,
		log:     log.With("component", "bus"),
		names:   names{ns: cfg.Namespace},
		up:      make(chan struct{}),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	c.rpc = newRequester(c)
	ac, err := c.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("bus: dial: %w", err)
	}
	go c.supervise(ac)
	return c, nil
}

// Close stops redialling and closes the connection; running Consume, Listen and Serve calls
// return.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	<-c.done
	return nil
}

// Connected reports whether the connection is up right now. The gateway trusts its token
// cache only while it is, because revocations arrive over it.
func (c *Conn) Connected() bool { return c.connected.Load() }

// connect dials once and declares the shared topology, so that nothing built on the
// connection can see it before the exchanges exist.
func (c *Conn) connect(ctx context.Context) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	host, _ := os.Hostname()
	props.SetClientConnectionName("tori:" + host + ":" + c.cfg.Namespace)
	ac, err := amqp.DialConfig(c.cfg.URL, amqp.Config{
		Heartbeat:  heartbeat,
		Properties: props,
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// Heartbeats start only after the handshake; until then a silent peer would
			// hang us. amqp091 clears the deadline once the connection is open.
			return nc, nc.SetDeadline(time.Now().Add(2 * dialTimeout))
		},
	})
	if err != nil {
		return nil, err
	}
	if err := c.declareShared(ac); err != nil {
		ac.Close()
		return nil, err
	}
	return ac, nil
}

// supervise owns the connection: it publishes it to the rest of the Conn, waits for its loss
// and redials with backoff, until Close.
func (c *Conn) supervise(ac *amqp.Connection) {
	defer close(c.done)
	for {
		lost := ac.NotifyClose(make(chan *amqp.Error, 1))
		c.setUp(ac)
		c.log.Info("bus connected")
		select {
		case <-c.closing:
			c.setDown()
			if err := ac.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
				c.log.Warn("bus close", "err", err)
			}
			c.log.Info("bus closed")
			return
		case err := <-lost:
			c.setDown()
			// A nil error here means the library closed the connection on its own, which
			// for us is as much a loss as a reset.
			c.log.Warn("bus connection lost", "err", errString(err))
		}
		if ac = c.redial(); ac == nil {
			return
		}
	}
}

// redial returns a new connection, or nil once the Conn is closing.
func (c *Conn) redial() *amqp.Connection {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	b := backoff{base: 100 * time.Millisecond, max: 5 * time.Second}
	for attempt := 1; ; attempt++ {
		if !b.sleep(ctx) {
			return nil
		}
		ac, err := c.connect(ctx)
		if err == nil {
			return ac
		}
		if ctx.Err() != nil {
			return nil
		}
		c.log.Warn("bus redial failed", "attempt", attempt, "err", err)
	}
}

func (c *Conn) setUp(ac *amqp.Connection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.amqp = ac
	close(c.up)
	c.connected.Store(true)
}

func (c *Conn) setDown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.amqp == nil {
		return
	}
	c.amqp = nil
	c.up = make(chan struct{})
	c.connected.Store(false)
}

// current waits until the connection is up and returns it.
func (c *Conn) current(ctx context.Context) (*amqp.Connection, error) {
	for {
		c.mu.Lock()
		ac, up := c.amqp, c.up
		c.mu.Unlock()
		if ac != nil && !ac.IsClosed() {
			return ac, nil
		}
		var stale <-chan time.Time
		if ac != nil {
			// Dead but not yet noticed by the supervisor (up is still the closed channel of
			// the old link): give it a moment rather than spin.
			up = nil
			stale = time.After(20 * time.Millisecond)
		}
		select {
		case <-up:
		case <-stale:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closing:
			return nil, ErrClosed
		}
	}
}

// channel opens a channel on the current connection, waiting for one if it is down.
func (c *Conn) channel(ctx context.Context) (*amqp.Channel, error) {
	for {
		ac, err := c.current(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := ac.Channel()
		if err == nil {
			return ch, nil
		}
		if !ac.IsClosed() {
			return nil, err
		}
		// The connection died between current and Channel; wait for the next one.
	}
}

// isClosing reports whether Close has been called.
func (c *Conn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

func errString(err *amqp.Error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}
