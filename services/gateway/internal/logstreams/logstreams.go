// Package logstreams keeps the gateway's open log streams (GET /api/apps/{slug}/logs/stream):
// at most a number per account, counted across gateways (Places), and a way to end them from
// the gateway's side, where revocations and tokens' ends are known, with a final Server-Sent
// Event saying why.
package logstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrTooMany means the account already holds its most streams open.
var ErrTooMany = errors.New("logstreams: too many open streams")

// Reasons the gateway ends a stream with.
const (
	ReasonTokenRevoked = "token_revoked"
	ReasonTokenExpired = "token_expired"
	ReasonShutdown     = "shutdown"
	// ReasonAccessChanged: the person's roles changed (or they left a team); a client
	// reconnects and is served with the new ones, or refused.
	ReasonAccessChanged = "access_changed"
)

var messages = map[string]string{
	ReasonTokenRevoked:  "The token this stream was opened with was revoked; sign in again to read logs.",
	ReasonTokenExpired:  "The token this stream was opened with has expired; sign in again to read logs.",
	ReasonShutdown:      "The gateway is restarting; reconnect with Last-Event-ID to resume.",
	ReasonAccessChanged: "Your role in a team changed; reconnect with Last-Event-ID to resume with your current access.",
}

// LeaseTTL is how long a stream's place is held without renewal: a gateway that dies holding
// places gives them back within it. Run renews every open stream's lease a third of it apart.
const LeaseTTL = 30 * time.Second

// placesTimeout bounds one call to the places' store, so a slow Redis cannot hold a request.
const placesTimeout = 2 * time.Second

// Registry counts and ends open streams. The zero value is not usable; see New.
type Registry struct {
	max    int
	places Places
	log    *slog.Logger

	mu     sync.Mutex
	open   map[*Stream]struct{}
	closed bool
}

// New allows max open streams per account, counted in places (NewMemory() when nil); log
// (slog.Default() when nil) gets the store's failures.
func New(max int, places Places, log *slog.Logger) *Registry {
	if places == nil {
		places = NewMemory()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Registry{max: max, places: places, log: log, open: map[*Stream]struct{}{}}
}

// Stream is one open stream; Release (or the end of its wrapped body) frees its place.
type Stream struct {
	reg    *Registry
	lease  Lease
	user   string
	token  string
	expiry *time.Timer // nil for a token that does not expire
	end    chan string // the gateway's reason to end it, sent once
	once   sync.Once
}

// Open takes a place for account's stream opened with token, which is valid until expires
// (zero: no end); the stream ends with token_expired then. When the places' store cannot be
// reached the stream is allowed and its place taken at the next renewal, as the rate limits
// allow requests when their store is down: a Redis outage must not stop every log stream.
func (r *Registry) Open(ctx context.Context, account, token string, expires time.Time) (*Stream, error) {
	return r.OpenFor(ctx, account, "", token, expires)
}

// OpenFor is Open for a stream the person user opened, which EndUser can end.
func (r *Registry) OpenFor(ctx context.Context, account, user, token string, expires time.Time) (*Stream, error) {
	lease := Lease{Account: account, ID: uuid.NewString()}
	tctx, cancel := context.WithTimeout(ctx, placesTimeout)
	ok, err := r.places.Take(tctx, lease, r.max, LeaseTTL)
	cancel()
	if err != nil {
		r.log.WarnContext(ctx, "log stream places unreachable: stream allowed, counted at the next renewal", "err", err.Error())
	} else if !ok {
		return nil, ErrTooMany
	}
	s := &Stream{reg: r, lease: lease, user: user, token: token, end: make(chan string, 1)}
	r.mu.Lock()
	if r.closed {
		s.end <- ReasonShutdown
	}
	r.open[s] = struct{}{}
	r.mu.Unlock()
	if !expires.IsZero() {
		s.expiry = time.AfterFunc(time.Until(expires), func() { s.stop(ReasonTokenExpired) })
	}
	return s, nil
}

// Count is how many streams account has open on this gateway.
func (r *Registry) Count(account string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for s := range r.open {
		if s.lease.Account == account {
			n++
		}
	}
	return n
}

// Release frees the stream's place; later calls do nothing.
func (s *Stream) Release() {
	s.once.Do(func() {
		if s.expiry != nil {
			s.expiry.Stop()
		}
		r := s.reg
		r.mu.Lock()
		delete(r.open, s)
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), placesTimeout)
		defer cancel()
		if err := r.places.Free(ctx, s.lease); err != nil {
			// The lease lapses by itself within LeaseTTL.
			r.log.Warn("log stream place not freed: it lapses by itself", "err", err.Error())
		}
	})
}

// stop asks the stream to end with reason, unless it is already ending.
func (s *Stream) stop(reason string) {
	select {
	case s.end <- reason:
	default: // already ending
	}
}

// Run renews the leases of the streams open here every LeaseTTL/3 until ctx ends, then ends
// every stream (Shutdown).
func (r *Registry) Run(ctx context.Context) error {
	t := time.NewTicker(LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.Shutdown()
			return nil
		case <-t.C:
			r.renew(ctx)
		}
	}
}

func (r *Registry) renew(ctx context.Context) {
	r.mu.Lock()
	streams := make([]*Stream, 0, len(r.open))
	leases := make([]Lease, 0, len(r.open))
	for s := range r.open {
		streams = append(streams, s)
		leases = append(leases, s.lease)
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, placesTimeout)
	defer cancel()
	if err := r.places.Renew(ctx, leases, LeaseTTL); err != nil {
		r.log.WarnContext(ctx, "log stream places not renewed", "streams", len(leases), "err", err.Error())
		return
	}
	// A stream released while its lease was being renewed may have been held again after its
	// Free: give those places back now rather than a lease later.
	r.mu.Lock()
	var gone []Lease
	for _, s := range streams {
		if _, open := r.open[s]; !open {
			gone = append(gone, s.lease)
		}
	}
	r.mu.Unlock()
	for _, l := range gone {
		if err := r.places.Free(ctx, l); err != nil {
			r.log.WarnContext(ctx, "log stream place not freed: it lapses by itself", "err", err.Error())
		}
	}
}

// Revoke ends every stream opened with tokenID.
func (r *Registry) Revoke(tokenID string) {
	if tokenID == "" {
		return
	}
	r.endWhere(ReasonTokenRevoked, func(s *Stream) bool { return s.token == tokenID })
}

// EndUser ends every stream the person userID opened, whatever the token: their roles
// changed, and a stream goes on with what it was allowed when it opened.
func (r *Registry) EndUser(userID string) {
	if userID == "" {
		return
	}
	r.endWhere(ReasonAccessChanged, func(s *Stream) bool { return s.user == userID })
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
			s.stop(reason)
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
