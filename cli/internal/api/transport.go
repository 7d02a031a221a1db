package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultTimeout is how long a request may see no answer: no connection, no TLS handshake, no
// response headers after the body went, or no progress of an upload or a download.
const DefaultTimeout = 30 * time.Second

// NewHTTPClient is the client the command line uses. It has no overall deadline: an upload of
// a large folder on a slow line may take minutes, so it is bounded by its progress (see
// progress below), and every step that waits on the other side by timeout.
func NewHTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}}
}

// defaultHTTP serves a Client without one of its own: never http.DefaultClient, which
// waits forever.
var defaultHTTP = NewHTTPClient(DefaultTimeout)

// errStalled is the cause of a request cancelled because its body made no progress.
var errStalled = errors.New("no progress")

// progress cancels its context once nothing has moved for the timeout; every read that
// moves a byte, of the request body or of the answer, starts the wait again. Paused while
// neither side is being read (the transport waiting for headers has its own timeout).
type progress struct {
	mu      sync.Mutex
	timer   *time.Timer
	timeout time.Duration
}

func watchProgress(ctx context.Context, timeout time.Duration) (context.Context, *progress, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	p := &progress{timeout: timeout}
	p.timer = time.AfterFunc(timeout, func() { cancel(errStalled) })
	p.timer.Stop()
	return ctx, p, func() { p.pause(); cancel(nil) }
}

func (p *progress) moved() {
	p.mu.Lock()
	p.timer.Reset(p.timeout)
	p.mu.Unlock()
}

func (p *progress) pause() {
	p.mu.Lock()
	p.timer.Stop()
	p.mu.Unlock()
}

// reader counts r's reads as progress; at the end of r it pauses the wait.
func (p *progress) reader(r io.ReadCloser) io.ReadCloser {
	p.moved()
	return &progressReader{r: r, p: p}
}

type progressReader struct {
	r io.ReadCloser
	p *progress
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if n > 0 {
		pr.p.moved()
	}
	if err != nil {
		pr.p.pause()
	}
	return n, err
}

func (pr *progressReader) Close() error { return pr.r.Close() }
