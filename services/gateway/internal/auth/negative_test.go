package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Random tokens cost identity one query each per NegativeTTL, however often they are sent.
func TestUnknownTokensAreRememberedBriefly(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), 30*time.Second)
	t0 := time.Now()
	clock := t0
	a.now = func() time.Time { return clock }
	ctx := context.Background()

	refused := func(tok string) {
		t.Helper()
		if _, err := a.Authenticate(ctx, "Bearer "+tok); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("%s: %v, want ErrUnauthorized", tok, err)
		}
	}
	for range 5 {
		refused("svc_random1")
	}
	if n := id.calls.Load(); n != 1 {
		t.Fatalf("%d introspections for one unknown token sent 5 times, want 1", n)
	}
	refused("svc_random2") // another token is its own question
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("%d introspections, want 2", n)
	}

	// Just inside the TTL still remembered; at its end asked again.
	clock = t0.Add(NegativeTTL - time.Millisecond)
	refused("svc_random1")
	if n := id.calls.Load(); n != 2 {
		t.Fatalf("inside the TTL: %d introspections, want 2", n)
	}
	clock = t0.Add(NegativeTTL)
	refused("svc_random1")
	if n := id.calls.Load(); n != 3 {
		t.Fatalf("after the TTL: %d introspections, want 3", n)
	}

	// A valid token is unaffected, and identity being down is never remembered as "unknown".
	if _, err := a.Authenticate(ctx, "Bearer svc_alice"); err != nil {
		t.Fatal(err)
	}
}

func TestUnavailableIsNotRememberedAsUnknown(t *testing.T) {
	u := NewUnknown(time.Minute)
	a := NewAuthenticator(downIntrospector{}, NewCache(), trustAlways(true), time.Minute)
	a.unknown = u
	for range 2 {
		if _, err := a.Authenticate(context.Background(), "Bearer svc_x"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%v, want ErrUnavailable", err)
		}
	}
	if u.Len() != 0 {
		t.Fatal("an unanswered introspection was cached as an unknown token")
	}
}

type downIntrospector struct{}

func (downIntrospector) Introspect(context.Context, string) (Introspection, error) {
	return Introspection{}, ErrUnavailable
}

func TestUnknownIsBounded(t *testing.T) {
	u := NewUnknown(time.Minute)
	now := time.Now()
	for i := range maxUnknown + 10 {
		var h Hash
		h[0], h[1], h[2] = byte(i), byte(i>>8), byte(i>>16)
		u.Add(h, now)
	}
	if u.Len() != maxUnknown {
		t.Fatalf("%d remembered, want the bound %d", u.Len(), maxUnknown)
	}
	u.Add(Hash{0xff, 0xff, 0xff, 1}, now.Add(time.Minute))
	if u.Len() != 1 {
		t.Fatalf("after the TTL %d remembered, want 1", u.Len())
	}
}
