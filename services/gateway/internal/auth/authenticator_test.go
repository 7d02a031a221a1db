package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

func alice() Introspection {
	return Introspection{AccountID: "acct-a", UserID: "user-a", TokenKind: "api", TokenID: "tokid-a"}
}

func TestValidTokenIsCachedByHash(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	cache := NewCache()
	a := NewAuthenticator(id.client(), cache, trustAlways(true), 30*time.Second)

	for i := 0; i < 3; i++ {
		c, err := a.Authenticate(context.Background(), "Bearer svc_alice")
		if err != nil || c.AccountID != "acct-a" || c.TokenID != "tokid-a" || c.TokenKind != "api" {
			t.Fatalf("caller %+v, %v", c, err)
		}
	}
	if n := id.calls.Load(); n != 1 {
		t.Fatalf("%d introspections, want 1", n)
	}
	if _, ok := cache.Get(sha256.Sum256([]byte("svc_alice")), time.Now()); !ok || cache.Len() != 1 {
		t.Fatal("the cache is keyed by the token's SHA-256")
	}
}

func TestCacheTTLAndTokenExpiry(t *testing.T) {
	id := newFakeIdentity(t)
	now := time.Now()
	exp := now.Add(10 * time.Second)
	sess := Introspection{AccountID: "acct-a", UserID: "u", TokenKind: "session", TokenID: "s1", ExpiresAt: &exp}
	id.set("tok_sess", sess)
	id.set("svc_alice", alice())
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
	clock := now
	a.now = func() time.Time { return clock }
	ctx := context.Background()

	// Whether introspected or cached, the principal carries its token's end (a log stream
	// ends there); an API token's is zero.
	mustAuth := func(h string, expires time.Time) {
		t.Helper()
		p, err := a.Authenticate(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Expires.Equal(expires) {
			t.Fatalf("%s expires %v, want %v", h, p.Expires, expires)
		}
	}
	mustAuth("Bearer tok_sess", exp)
	mustAuth("Bearer svc_alice", time.Time{})
	clock = now.Add(9 * time.Second)
	mustAuth("Bearer tok_sess", exp)
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2 (both cached)", n)
	}

	// Past the session's end the cache no longer vouches for it, whatever the TTL says: its
	// entry, gone stale at that end, refuses it without asking identity (a plain 401 for a
	// session; token_expired is for API tokens).
	clock = now.Add(11 * time.Second)
	if _, err := a.Authenticate(ctx, "Bearer tok_sess"); !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired session: %v", err)
	}
	mustAuth("Bearer svc_alice", time.Time{}) // still within its 30s
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
	clock = now.Add(31 * time.Second)
	mustAuth("Bearer svc_alice", time.Time{})
	if n := id.calls.Load(); n != 3 {
		t.Fatalf("%d calls, want 3 (TTL over)", n)
	}

	// An answer naming a past end is refused even though identity said 200.
	past := now.Add(20 * time.Second)
	id.set("tok_late", Introspection{AccountID: "acct-a", UserID: "u", TokenKind: "session", TokenID: "s2", ExpiresAt: &past})
	if _, err := a.Authenticate(ctx, "Bearer tok_late"); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("identity's answer past its end: %v", err)
	}
}

func TestUntrustedCacheIsNeitherReadNorWritten(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	cache := NewCache()
	a := NewAuthenticator(id.client(), cache, trustAlways(false), 30*time.Second)
	for i := 0; i < 3; i++ {
		if _, err := a.Authenticate(context.Background(), "Bearer svc_alice"); err != nil {
			t.Fatal(err)
		}
	}
	if n := id.calls.Load(); n != 3 || cache.Len() != 0 {
		t.Fatalf("%d calls, %d cached; want 3, 0", n, cache.Len())
	}
}

func TestZeroTTLDisablesCache(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 0)
	for i := 0; i < 2; i++ {
		if _, err := a.Authenticate(context.Background(), "Bearer svc_alice"); err != nil {
			t.Fatal(err)
		}
	}
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
}

func TestBadTokensAreUnauthorized(t *testing.T) {
	id := newFakeIdentity(t)
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
	for _, h := range []string{"", "Bearer", "Bearer nope", "Basic abc", "Bearer tok_unknown", "Bearer svc_unknown"} {
		if _, err := a.Authenticate(context.Background(), h); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("%q: %v", h, err)
		}
	}
	// Only the two well-formed ones reached identity, and a refused token is remembered for
	// NegativeTTL (negative_test.go), so asking again costs identity nothing.
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
	if _, err := a.Authenticate(context.Background(), "Bearer tok_unknown"); !errors.Is(err, ErrUnauthorized) || id.calls.Load() != 2 {
		t.Fatal("a token refused a moment ago was asked about again")
	}
}

func TestIdentityFailureIsUnavailable(t *testing.T) {
	id := newFakeIdentity(t)
	id.status = http.StatusInternalServerError
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
	if _, err := a.Authenticate(context.Background(), "Bearer svc_x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("identity 500: %v", err)
	}
	id.srv.Close()
	if _, err := a.Authenticate(context.Background(), "Bearer svc_x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("identity down: %v", err)
	}
}

// Identity that cannot answer (a 5xx, a 503 from a full replay store) or that refuses the
// gateway's signature (a 401 without X-Tori-Token-Unknown) says nothing about the token: the
// request is unavailable, not unauthorized, and the token is not remembered as unknown, so it
// is served as soon as identity is back.
func TestIdentityFailuresAreNeverTakenForUnknownTokens(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusUnauthorized} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			id := newFakeIdentity(t)
			id.set("svc_alice", alice())
			a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
			id.mu.Lock()
			id.status = status // a bare status: no X-Tori-Token-Unknown
			id.mu.Unlock()
			for range 3 {
				if _, err := a.Authenticate(context.Background(), "Bearer svc_alice"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnauthorized) {
					t.Fatalf("identity %d: %v, want ErrUnavailable", status, err)
				}
			}
			if a.unknown.Len() != 0 {
				t.Fatalf("identity %d: %d tokens remembered as unknown", status, a.unknown.Len())
			}
			id.mu.Lock()
			id.status = 0
			id.mu.Unlock()
			if c, err := a.Authenticate(context.Background(), "Bearer svc_alice"); err != nil || c.AccountID != "acct-a" {
				t.Fatalf("identity back: %+v %v", c, err)
			}
		})
	}
}

// A wrongly signed introspection is refused by identity; the fake refuses with 403, which the
// client must not read as "valid".
func TestIntrospectionIsSignedAsGateway(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	wrong := NewIdentityClient(id.srv.URL, []byte("another-key-entirely-000"), http.DefaultTransport)
	if _, err := wrong.Introspect(context.Background(), "svc_alice"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := id.client().Introspect(context.Background(), "svc_alice"); err != nil {
		t.Fatalf("right key: %v", err)
	}
}

func TestRevocationEvicts(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	b := newFakeBus()
	cache := NewCache()
	rev := NewRevocations(b, cache, quiet)
	rev.timings = fast
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runRevocations(t, rev)
	testinfra.Eventually(t, time.Second, "trusted after the grace period", func() bool { return rev.Trusted(time.Now()) })

	a := NewAuthenticator(id.client(), cache, rev, time.Minute)
	if _, err := a.Authenticate(ctx, "Bearer svc_alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, "Bearer svc_alice"); err != nil || id.calls.Load() != 1 {
		t.Fatalf("not cached: %v", err)
	}

	id.remove("svc_alice")
	b.revoke(t, "tokid-a")
	if _, err := a.Authenticate(ctx, "Bearer svc_alice"); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("revoked token: %v", err)
	}
}

func TestDisconnectFlushesAndReconnectWaitsForGrace(t *testing.T) {
	b := newFakeBus()
	cache := NewCache()
	rev := NewRevocations(b, cache, quiet)
	rev.timings = fast
	if rev.Trusted(time.Now()) {
		t.Fatal("trusted before listening")
	}
	runRevocations(t, rev)
	testinfra.Eventually(t, time.Second, "trusted", func() bool { return rev.Trusted(time.Now()) })
	cache.Put(sha256.Sum256([]byte("svc_x")), alice().Principal(), time.Now().Add(time.Minute), cache.Generation())

	b.connected.Store(false)
	if rev.Trusted(time.Now()) {
		t.Fatal("trusted while disconnected")
	}
	if cache.Len() != 0 {
		t.Fatal("cache kept across a disconnect: revocations may have been missed")
	}

	b.connected.Store(true)
	reconnected := time.Now()
	testinfra.Eventually(t, time.Second, "trusted again", func() bool { return rev.Trusted(time.Now()) })
	if since := time.Since(reconnected); since < fast.grace {
		t.Fatalf("trusted %s after reconnecting, before the %s grace", since, fast.grace)
	}
}

// A revocation that lands while identity's "valid" answer is on its way must win: the answer
// is used for that one request but not cached.
func TestRevocationDuringIntrospectionIsNotCached(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	hold := make(chan struct{})
	id.hold = hold
	cache := NewCache()
	a := NewAuthenticator(id.client(), cache, trustAlways(true), time.Minute)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := a.Authenticate(context.Background(), "Bearer svc_alice"); err != nil {
			t.Error(err)
		}
	}()
	testinfra.Eventually(t, time.Second, "introspection in flight", func() bool { return id.calls.Load() == 1 })
	cache.Evict("tokid-a")
	close(hold)
	wg.Wait()
	if cache.Len() != 0 {
		t.Fatal("an answer older than a revocation was cached")
	}
}

func TestListenerFailureStopsTrust(t *testing.T) {
	b := &failingBus{}
	rev := NewRevocations(b, NewCache(), quiet)
	rev.timings = fast
	runRevocations(t, rev)
	// The listener's own retries mark time: ten of them span twice the grace period and
	// many rounds of the watch, any of which could have wrongly trusted the cache.
	testinfra.Eventually(t, 5*time.Second, "listener retried", func() bool { return b.calls.Load() >= 10 })
	if rev.Trusted(time.Now()) {
		t.Fatal("trusted although the listener keeps failing")
	}
}

func TestSweepDropsStaleEntries(t *testing.T) {
	c := NewCache()
	now := time.Now()
	c.Put(sha256.Sum256([]byte("a")), alice().Principal(), now.Add(-time.Second), c.Generation())
	fresh := alice().Principal()
	fresh.TokenID = "other"
	c.Put(sha256.Sum256([]byte("b")), fresh, now.Add(time.Minute), c.Generation())
	if n := c.Sweep(now); n != 1 || c.Len() != 1 {
		t.Fatalf("swept %d, %d entries left; want 1, 1", n, c.Len())
	}
}

func TestSweepJobReportsWhatItDropped(t *testing.T) {
	c := NewCache()
	c.Put(sha256.Sum256([]byte("a")), alice().Principal(), time.Now().Add(-time.Second), c.Generation())
	job := c.SweepJob()
	if n, err := job.Run(context.Background()); n != 1 || err != nil || c.Len() != 0 {
		t.Fatalf("%s: %d, %v, %d left", job.Name, n, err, c.Len())
	}
}

// Tokens cached at the same moment expire over the last fifth of the TTL, not all together,
// so a burst of sign-ins does not return to identity as one burst.
func TestTokensCachedTogetherExpireSpread(t *testing.T) {
	id := newFakeIdentity(t)
	for i := range 100 {
		id.set(fmt.Sprintf("svc_t%d", i), Introspection{AccountID: "acct-a", UserID: "u", TokenKind: "api", TokenID: fmt.Sprintf("t%d", i)})
	}
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
	now := time.Now()
	clock := now
	a.now = func() time.Time { return clock }
	askedAt := func(at time.Duration) int64 {
		clock = now.Add(at)
		before := id.calls.Load()
		for i := range 100 {
			if _, err := a.Authenticate(context.Background(), fmt.Sprintf("Bearer svc_t%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		return id.calls.Load() - before
	}
	if n := askedAt(0); n != 100 {
		t.Fatalf("first round asked identity %d times", n)
	}
	if n := askedAt(24*time.Second - time.Millisecond); n != 0 {
		t.Fatalf("%d tokens expired before the last fifth of the TTL", n)
	}
	if n := askedAt(27 * time.Second); n == 0 || n == 100 {
		t.Fatalf("%d of 100 tokens expired together at 27 s: not spread", n)
	}
}
