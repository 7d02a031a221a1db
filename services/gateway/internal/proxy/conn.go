package proxy

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// writeErrorHold bounds how long a failed write to a service waits for the read side to
// catch up (see heldConn).
const writeErrorHold = 2 * time.Second

// heldConn is a connection to a service whose write errors wait for its read side.
//
// A service that refuses a request from its headers alone (413 over its body limit, 401, 400)
// answers and closes the connection with the body unread, so the gateway's next write fails
// with a reset while the answer sits in the receive buffer. net/http's transport takes
// whichever of the write error and the response it sees first (golang/go#11745), and on a
// busy machine the error often wins: the client got 502 instead of the service's answer.
// Holding the write error until a read has failed, or the transport has closed the
// connection, lets the response arrive first whenever the service sent one; a service that
// crashed fails its reads at once, so nothing waits long.
type heldConn struct {
	net.Conn
	once     sync.Once
	readDone chan struct{}
}

func (c *heldConn) done() { c.once.Do(func() { close(c.readDone) }) }

func (c *heldConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.done()
	}
	return n, err
}

func (c *heldConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t := time.NewTimer(writeErrorHold)
		defer t.Stop()
		select {
		case <-c.readDone:
		case <-t.C:
		}
	}
	return n, err
}

func (c *heldConn) Close() error {
	c.done()
	return c.Conn.Close()
}

// dialHeld dials with d and wraps the connection in a heldConn.
func dialHeld(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &heldConn{Conn: conn, readDone: make(chan struct{})}, nil
	}
}
