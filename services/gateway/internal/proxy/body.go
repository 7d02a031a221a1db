package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// earlyDrainLimit is how much of a request body the gateway reads away after a service
// answered without reading it, so the client can finish sending and read the answer.
const earlyDrainLimit = 1 << 20

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
	obs  Observer // nil, or sees every byte the service reads
}

func (g *guardedBody) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, errBodyClosed
	}
	n, err := g.r.Read(p)
	g.read += int64(n)
	if g.obs != nil && n > 0 {
		g.obs.RequestBody(p[:n])
	}
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

// drainRest reads away what the client is still sending after the service answered early,
// up to earlyDrainLimit and for at most drainTimeout. A client writes its whole body before it
// reads the answer (most do, as net/http does); closing on it mid-write resets the connection
// and the client sees a write error instead of the answer it was sent.
func (g *guardedBody) drainRest() {
	if g.eof.Load() || g.conn == nil {
		return
	}
	// The transport may have closed the body already (its own reads end there); the stream
	// itself is fasthttp's until the response is written, which is when this runs.
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = g.conn.SetReadDeadline(time.Now().Add(drainTimeout))
	n, err := io.Copy(io.Discard, io.LimitReader(g.r, earlyDrainLimit+1))
	if err == nil && n <= earlyDrainLimit {
		g.eof.Store(true)
	}
}

// Complete reports whether the whole body was read. When it was not, the rest is still on the
// client's connection, which therefore cannot carry another request.
func (g *guardedBody) Complete() bool { return g.eof.Load() }

// responseBody releases the request body once fasthttp has written the whole response, which
// is the moment before it recycles the request body stream, and tells the observer how the
// exchange ended.
type responseBody struct {
	io.ReadCloser
	guard *guardedBody
	obs   Observer

	length   int64 // the answer's declared length, -1 when unknown
	got      int64
	failed   bool // a read of the service's answer failed: the client got part of it
	reported bool
}

func (r *responseBody) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.got += int64(n)
	if r.obs == nil {
		return n, err
	}
	if n > 0 {
		r.obs.ResponseBody(p[:n])
	}
	switch {
	case err == io.EOF || (err == nil && r.length >= 0 && r.got == r.length):
		// The whole answer is in hand: report before its last bytes go out, so a client that
		// has read the answer never finds the exchange still open. fasthttp stops at a
		// declared length without asking for the EOF after it.
		r.report(true)
	case err != nil:
		r.failed = true
	}
	return n, err
}

func (r *responseBody) report(whole bool) {
	if r.reported {
		return
	}
	r.reported = true
	r.obs.Done(r.guard == nil || r.guard.Complete(), whole && !r.failed, nil)
}

func (r *responseBody) Close() error {
	if r.obs != nil {
		r.report(false)
	}
	if r.guard != nil {
		r.guard.drainRest()
		_ = r.guard.Close()
	}
	return r.ReadCloser.Close()
}
