package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errBodyClosed = errors.New("proxy: request body no longer available")
	// ErrTooLarge means the request body is over the gateway's cap.
	ErrTooLarge = errors.New("proxy: request body too large")
)

// guardedBody is the client's request body as the upstream request reads it.
//
// net/http may go on reading a request body after RoundTrip has returned (when a service
// answers before reading everything), but fasthttp recycles the body stream once the response
// is written. Close, called before that, blocks until any read in flight has returned, and
// every later read fails, so the transport never touches a recycled stream.
type guardedBody struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
	read   int64
	max    int64

	eof  atomic.Bool
	conn net.Conn // the client's connection, to wake a read blocked on it
}

func (g *guardedBody) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, errBodyClosed
	}
	n, err := g.r.Read(p)
	g.read += int64(n)
	if g.read > g.max {
		return n, ErrTooLarge // a chunked body over the cap; a declared one is refused earlier
	}
	if err == io.EOF {
		g.eof.Store(true)
	}
	return n, err
}

// Close stops all further reads. Net/http calls it too, when it is done with the body.
func (g *guardedBody) Close() error {
	if !g.eof.Load() && g.conn != nil {
		// A read may be blocked on a client that stopped sending; a deadline in the past
		// wakes it. The connection is closed after this response anyway (see Complete).
		_ = g.conn.SetReadDeadline(time.Now())
	}
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return nil
}

// Complete reports whether the whole body was read. When it was not, the rest is still on the
// client's connection, which therefore cannot carry another request.
func (g *guardedBody) Complete() bool { return g.eof.Load() }

// responseBody releases the request body once fasthttp has written the whole response, which
// is the moment before it recycles the request body stream.
type responseBody struct {
	io.ReadCloser
	guard *guardedBody
}

func (r responseBody) Close() error {
	if r.guard != nil {
		_ = r.guard.Close()
	}
	return r.ReadCloser.Close()
}
