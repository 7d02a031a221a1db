// Package logstreams keeps the gateway's open log streams (GET /api/apps/{slug}/logs/stream):
// at most a number per account, and a way to end them from the gateway's side, where
// revocations are known, with a final Server-Sent Event saying why.
package logstreams

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// ErrTooMany means the account already has its most streams open on this gateway.
var ErrTooMany = errors.New("logstreams: too many open streams")

// Reasons the gateway ends a stream with.
const (
	ReasonTokenRevoked = "token_revoked"
	ReasonShutdown     = "shutdown"
)

var messages = map[string]string{
	ReasonTokenRevoked: "The token this stream was opened with was revoked; sign in again to read logs.",
	ReasonShutdown:     "The gateway is restarting; reconnect with Last-Event-ID to resume.",
}

// Registry counts and ends open streams. The zero value is not usable; see New.
type Registry struct {
	max int

	mu        sync.Mutex
	byAccount map[string]int
	open      map[*Stream]struct{}
	closed    bool
}

// New allows max open streams per account.
func New(max int) *Registry {
	return &Registry{max: max, byAccount: map[string]int{}, open: map[*Stream]struct{}{}}
}

// Stream is one open stream; Release (or the end of its wrapped body) frees its place.
type Stream struct {
	reg     *Registry
	account string
	token   string
	end     chan string // the gateway's reason to end it, sent once
	once    sync.Once
}

// Open takes a place for account's stream opened with token.
func (r *Registry) Open(account, token string) (*Stream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byAccount[account] >= r.max {
		return nil, ErrTooMany
	}
	s := &Stream{reg: r, account: account, token: token, end: make(chan string, 1)}
	if r.closed {
		s.end <- ReasonShutdown
	}
	r.byAccount[account]++
	r.open[s] = struct{}{}
	return s, nil
}

// Count is how many streams account has open.
func (r *Registry) Count(account string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byAccount[account]
}

// Release frees the stream's place; later calls do nothing.
func (s *Stream) Release() {
	s.once.Do(func() {
		r := s.reg
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.open, s)
		if r.byAccount[s.account]--; r.byAccount[s.account] <= 0 {
			delete(r.byAccount, s.account)
		}
	})
}

// Revoke ends every stream opened with tokenID.
func (r *Registry) Revoke(tokenID string) {
	if tokenID == "" {
		return
	}
	r.endWhere(ReasonTokenRevoked, func(s *Stream) bool { return s.token == tokenID })
}

// Shutdown ends every stream, and every stream opened from now on at once.
func (r *Registry) Shutdown() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.endWhere(ReasonShutdown, func(*Stream) bool { return true })
}

func (r *Registry) endWhere(reason string, match func(*Stream) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.open {
		if match(s) {
			select {
			case s.end <- reason:
			default: // already ending
			}
		}
	}
}

// CloseEvent is the final event the gateway sends for reason.
func CloseEvent(reason string) []byte {
	data, _ := json.Marshal(struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}{reason, messages[reason]})
	return append(append([]byte("event: close\ndata: "), data...), "\n\n"...)
}

// Wrap passes the service's event stream body through until it ends or the gateway ends the
// stream; then it closes body and sends the final event. Only whole events are passed on
// (up to a blank line), so the final event never lands inside a half-sent one. Closing the
// returned body releases the stream's place.
func (s *Stream) Wrap(body io.ReadCloser) io.ReadCloser {
	w := &wrapped{s: s, body: body, chunks: make(chan chunk, 4), done: make(chan struct{})}
	go w.pump()
	return w
}

type chunk struct {
	b   []byte
	err error
}

type wrapped struct {
	s      *Stream
	body   io.ReadCloser
	chunks chan chunk
	done   chan struct{}
	once   sync.Once

	pending []byte // of the current chunk, not yet read
	final   []byte // the final event, once decided
	ended   bool
}

// pump reads the service's body and hands on whole events.
func (w *wrapped) pump() {
	buf := make([]byte, 32<<10)
	var partial []byte
	for {
		n, err := w.body.Read(buf)
		partial = append(partial, buf[:n]...)
		if i := bytes.LastIndex(partial, []byte("\n\n")); i >= 0 {
			whole := append([]byte(nil), partial[:i+2]...)
			partial = append(partial[:0], partial[i+2:]...)
			select {
			case w.chunks <- chunk{b: whole}:
			case <-w.done:
				return
			}
		}
		if err != nil {
			select {
			case w.chunks <- chunk{err: err}:
			case <-w.done:
			}
			return
		}
	}
}

func (w *wrapped) Read(p []byte) (int, error) {
	for {
		if len(w.pending) > 0 {
			n := copy(p, w.pending)
			w.pending = w.pending[n:]
			return n, nil
		}
		if len(w.final) > 0 {
			n := copy(p, w.final)
			w.final = w.final[n:]
			return n, nil
		}
		if w.ended {
			return 0, io.EOF
		}
		select {
		case c := <-w.chunks:
			if c.err != nil {
				// The service ended the stream (its own final event is already through).
				w.ended = true
				continue
			}
			w.pending = c.b
		case reason := <-w.s.end:
			w.ended = true
			w.final = CloseEvent(reason)
			w.stopBody()
		}
	}
}

func (w *wrapped) stopBody() {
	w.once.Do(func() {
		close(w.done)
		_ = w.body.Close()
	})
}

// Close ends the stream from the client's side (fasthttp closes the body when the client is
// gone or the answer is complete).
func (w *wrapped) Close() error {
	w.stopBody()
	w.s.Release()
	return nil
}
