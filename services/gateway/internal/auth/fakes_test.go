package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/testinfra"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
)

var testKey = []byte("test-signing-key-0123456789")

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeIdentity answers /internal/introspect from a table, checking the gateway's signature
// as the real service does.
type fakeIdentity struct {
	srv   *httptest.Server
	calls atomic.Int64

	mu      sync.Mutex
	tokens  map[string]Introspection
	expired map[string]bool // tokens past their end: 401 with X-Tori-Token-Expired
	status  int             // when set, every answer has this status
	hold    chan struct{}   // when set, answers wait for it to close
}

func newFakeIdentity(t *testing.T) *fakeIdentity {
	f := &fakeIdentity{tokens: map[string]Introspection{}, expired: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIdentity) set(token string, in Introspection) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = in
}

func (f *fakeIdentity) remove(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tokens, token)
}

func (f *fakeIdentity) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	caller, err := callerid.Verify(testKey, r.Header.Get, r.Method, r.Host, r.RequestURI, time.Now())
	if err != nil || caller.Authenticated() || r.URL.Path != IntrospectPath || r.Method != http.MethodPost {
		http.Error(w, `{"error":"forbidden"}`, http.StatusForbidden)
		return
	}
	var req struct{ Token string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	in, ok := f.tokens[req.Token]
	expired := f.expired[req.Token]
	status, hold := f.status, f.hold
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	if !ok {
		w.Header().Set(TokenUnknownHeader, "1")
		if expired {
			w.Header().Set(TokenExpiredHeader, "1")
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"unauthorized"}`))
		return
	}
	_ = json.NewEncoder(w).Encode(in)
}

func (f *fakeIdentity) client() *IdentityClient {
	return NewIdentityClient(f.srv.URL, testKey, http.DefaultTransport)
}

// fakeBus is a bus connection the test connects, disconnects and publishes on.
type fakeBus struct {
	connected atomic.Bool
	mu        sync.Mutex
	fn        func(context.Context, bus.Delivery) error
	listening chan struct{}
}

func newFakeBus() *fakeBus {
	b := &fakeBus{listening: make(chan struct{})}
	b.connected.Store(true)
	return b
}

func (b *fakeBus) Connected() bool { return b.connected.Load() }

func (b *fakeBus) Listen(ctx context.Context, keys []string, fn func(context.Context, bus.Delivery) error) error {
	if len(keys) != 2 || keys[0] != identitybus.KeyTokenRevoked || keys[1] != identitybus.KeyMembershipChanged {
		return errors.New("unexpected keys")
	}
	b.mu.Lock()
	b.fn = fn
	close(b.listening)
	b.mu.Unlock()
	<-ctx.Done()
	return nil
}

func (b *fakeBus) revoke(t *testing.T, tokenID string) {
	t.Helper()
	<-b.listening
	body, err := proto.Marshal(&identityv1.TokenRevoked{TokenId: tokenID, AccountId: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	fn := b.fn
	b.mu.Unlock()
	if err := fn(context.Background(), bus.Delivery{RoutingKey: identitybus.KeyTokenRevoked, Body: body}); err != nil {
		t.Fatal(err)
	}
}

// deliver hands the listener one event, as the bus would.
func (b *fakeBus) deliver(t *testing.T, key string, m proto.Message) {
	t.Helper()
	<-b.listening
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	fn := b.fn
	b.mu.Unlock()
	if err := fn(context.Background(), bus.Delivery{RoutingKey: key, Body: body}); err != nil {
		t.Fatal(err)
	}
}

type trustAlways bool

func (t trustAlways) Trusted(time.Time) bool { return bool(t) }

// fast are trust rules quick enough for tests.
var fast = timings{watchEvery: 10 * time.Millisecond, grace: 50 * time.Millisecond, relistenAfter: 10 * time.Millisecond}

// runRevocations runs rev's listener and watch, as the gateway's group does, until the test
// ends; either failing or not stopping then fails the test.
func runRevocations(t *testing.T, rev *Revocations) {
	t.Helper()
	testinfra.Background(t, "revocation listener", rev.Listen)
	testinfra.Background(t, "revocation watch", rev.Watch)
}

type failingBus struct{ calls atomic.Int64 }

func (b *failingBus) Connected() bool { return true }

func (b *failingBus) Listen(context.Context, []string, func(context.Context, bus.Delivery) error) error {
	b.calls.Add(1)
	return errors.New("channel closed")
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
