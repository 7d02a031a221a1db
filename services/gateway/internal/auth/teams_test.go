package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"tori.dev/contract/access"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
)

const (
	userU = "0190f5e4-0000-7000-8000-0000000000a1"
	userV = "0190f5e4-0000-7000-8000-0000000000b2"
	teamT = "0190f5e4-0000-7000-8000-0000000000c3"
)

// scoped is a deploy token of userU pinned to two apps of team acme.
func scoped(expires time.Time) Introspection {
	return Introspection{
		AccountID: userU, UserID: userU, TokenKind: "api", TokenID: "tok-deploy", ExpiresAt: &expires,
		Teams: []TeamRole{{ID: teamT, Slug: "acme", Role: "developer"}},
		Scope: "deploy", Apps: []string{"web", "api"},
	}
}

// What identity says about a token's teams, scope and apps is what the gateway signs, in the
// form the services read back.
func TestPrincipalCarriesTeamsScopeAndApps(t *testing.T) {
	id := newFakeIdentity(t)
	full := Introspection{AccountID: userU, UserID: userU, TokenKind: "session", TokenID: "s1",
		Teams: []TeamRole{{ID: userU, Slug: "una", Role: "owner", Personal: true}, {ID: teamT, Slug: "acme", Role: "viewer"}}}
	id.set("tok_una", full)
	id.set("svc_deploy", scoped(time.Now().Add(time.Hour)))
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), time.Minute)
	ctx := context.Background()

	p, err := a.Authenticate(ctx, "Bearer tok_una")
	if err != nil {
		t.Fatal(err)
	}
	if want := userU + ":una:owner:personal;" + teamT + ":acme:viewer"; p.Teams != want || p.Scope != "" || p.Apps != "" {
		t.Fatalf("session signed as teams %q scope %q apps %q, want teams %q and no scope or apps", p.Teams, p.Scope, p.Apps, want)
	}
	ap := p.Principal()
	if ap.Scope != access.FullScope || !ap.Session || ap.Pinned() || ap.RoleIn(teamT) != access.Viewer || ap.RoleIn(userU) != access.Owner {
		t.Fatalf("the services read %+v", ap)
	}

	p, err = a.Authenticate(ctx, "Bearer svc_deploy")
	if err != nil {
		t.Fatal(err)
	}
	if p.Teams != teamT+":acme:developer" || p.Scope != "deploy" || p.Apps != "web,api" {
		t.Fatalf("scoped token signed as teams %q scope %q apps %q", p.Teams, p.Scope, p.Apps)
	}
	ap = p.Principal()
	if ap.Scope != access.Deploy || ap.Session || !slices.Equal(ap.Apps, []string{"web", "api"}) || ap.RoleIn(teamT) != access.Developer || ap.RoleIn(userU) != access.NoRole {
		t.Fatalf("the services read %+v", ap)
	}

	// An identity that predates teams: nothing signed, so the services take the caller for
	// the owner of their personal team, as before.
	id.set("svc_old", alice())
	if p, err = a.Authenticate(ctx, "Bearer svc_old"); err != nil || p.Teams != "" || p.Scope != "" || p.Apps != "" {
		t.Fatalf("%+v %v", p, err)
	}
}

// An answer the services would read differently from what identity meant (a role or scope
// they do not know, a separator inside an id, a scoped token without its team) is not signed:
// 503, nothing remembered either way.
func TestAnswersTheGatewayCannotSignFaithfullyAreUnavailable(t *testing.T) {
	good := scoped(time.Now().Add(time.Hour))
	cases := map[string]func(in *Introspection){
		"unknown role":            func(in *Introspection) { in.Teams[0].Role = "superuser" },
		"empty role":              func(in *Introspection) { in.Teams[0].Role = "" },
		"colon in a team id":      func(in *Introspection) { in.Teams[0].ID = "a:b" },
		"semicolon in a slug":     func(in *Introspection) { in.Teams[0].Slug = "a;b" },
		"no team id":              func(in *Introspection) { in.Teams[0].ID = "" },
		"unknown scope":           func(in *Introspection) { in.Scope = "everything" },
		"scoped without a team":   func(in *Introspection) { in.Teams = nil },
		"comma in an app":         func(in *Introspection) { in.Apps = []string{"a,b"} },
		"empty app":               func(in *Introspection) { in.Apps = []string{""} },
		"full scope by name":      func(in *Introspection) { in.Scope = "full" },
		"no token id (as before)": func(in *Introspection) { in.TokenID = "" },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			id := newFakeIdentity(t)
			in := good
			in.Teams = slices.Clone(good.Teams)
			spoil(&in)
			id.set("svc_x", in)
			cache := NewCache()
			a := NewAuthenticator(id.client(), cache, trustAlways(true), time.Minute)
			if _, err := a.Authenticate(context.Background(), "Bearer svc_x"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnauthorized) {
				t.Fatalf("%v, want ErrUnavailable", err)
			}
			if cache.Len() != 0 || a.unknown.Len() != 0 {
				t.Fatal("an answer that was not used was remembered")
			}
		})
	}
	// The good answer itself passes.
	id := newFakeIdentity(t)
	id.set("svc_x", good)
	if _, err := NewAuthenticator(id.client(), NewCache(), trustAlways(true), time.Minute).Authenticate(context.Background(), "Bearer svc_x"); err != nil {
		t.Fatal(err)
	}
}

// Identity says an API token has expired (401, unknown and expired): the client is told
// token_expired, and told so again from memory; an unknown token stays a plain 401.
func TestExpiredTokenIsTokenExpiredEveryTime(t *testing.T) {
	id := newFakeIdentity(t)
	id.expired["svc_old"] = true
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), time.Minute)
	ctx := context.Background()
	for range 3 {
		if _, err := a.Authenticate(ctx, "Bearer svc_old"); !errors.Is(err, ErrTokenExpired) || !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("%v, want ErrTokenExpired (an ErrUnauthorized)", err)
		}
	}
	if n := id.calls.Load(); n != 1 {
		t.Fatalf("%d introspections, want 1: the refusal and its reason are remembered", n)
	}
	for range 2 {
		if _, err := a.Authenticate(ctx, "Bearer svc_nope"); !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrTokenExpired) {
			t.Fatalf("unknown token: %v, want a plain ErrUnauthorized", err)
		}
	}
}

// A scoped token cached before its end is refused with token_expired from its end on,
// without asking identity, however long the cache would otherwise have kept it.
func TestCachedTokenPastItsEndIsTokenExpired(t *testing.T) {
	id := newFakeIdentity(t)
	now := time.Now()
	id.set("svc_deploy", scoped(now.Add(10*time.Second)))
	a := NewAuthenticator(id.client(), NewCache(), trustAlways(true), time.Minute)
	clock := now
	a.now = func() time.Time { return clock }
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "Bearer svc_deploy"); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(10*time.Second - time.Millisecond)
	if _, err := a.Authenticate(ctx, "Bearer svc_deploy"); err != nil {
		t.Fatalf("just before its end: %v", err)
	}
	clock = now.Add(10 * time.Second)
	for range 2 {
		if _, err := a.Authenticate(ctx, "Bearer svc_deploy"); !errors.Is(err, ErrTokenExpired) {
			t.Fatalf("at its end: %v, want ErrTokenExpired", err)
		}
	}
	if n := id.calls.Load(); n != 1 {
		t.Fatalf("%d introspections, want 1", n)
	}

	// Identity's 200 naming an end already past (clocks a moment apart) is token_expired too.
	id2 := newFakeIdentity(t)
	id2.set("svc_deploy", scoped(now.Add(-time.Second)))
	b := NewAuthenticator(id2.client(), NewCache(), trustAlways(true), time.Minute)
	if _, err := b.Authenticate(ctx, "Bearer svc_deploy"); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("answer past its end: %v", err)
	}
}

// identity.membership.changed drops every cached token of that person (their sessions and
// API tokens alike carry the old roles) and no one else's, tells the gateway's other parts
// (log streams), and the next request is signed with the new roles.
func TestMembershipChangeEvictsEveryTokenOfThePerson(t *testing.T) {
	id := newFakeIdentity(t)
	viewer := Introspection{AccountID: userU, UserID: userU, TokenKind: "session", TokenID: "s-u",
		Teams: []TeamRole{{ID: teamT, Slug: "acme", Role: "viewer"}}}
	id.set("tok_u", viewer)
	id.set("svc_deploy", scoped(time.Now().Add(time.Hour)))
	id.set("tok_v", Introspection{AccountID: userV, UserID: userV, TokenKind: "session", TokenID: "s-v"})
	b := newFakeBus()
	cache := NewCache()
	rev := NewRevocations(b, cache, quiet)
	rev.timings = fast
	var mu sync.Mutex
	var changed []string
	rev.OnMembershipChange(func(user string) { mu.Lock(); changed = append(changed, user); mu.Unlock() })
	runRevocations(t, rev)
	testinfra.Eventually(t, time.Second, "trusted", func() bool { return rev.Trusted(time.Now()) })
	a := NewAuthenticator(id.client(), cache, rev, time.Minute)
	ctx := context.Background()
	for _, tok := range []string{"tok_u", "svc_deploy", "tok_v"} {
		if _, err := a.Authenticate(ctx, "Bearer "+tok); err != nil {
			t.Fatal(err)
		}
	}
	if cache.Len() != 3 || cache.users() != 2 {
		t.Fatalf("%d cached for %d people, want 3 for 2", cache.Len(), cache.users())
	}

	promoted := viewer
	promoted.Teams = []TeamRole{{ID: teamT, Slug: "acme", Role: "admin"}}
	id.set("tok_u", promoted)
	b.deliver(t, identitybus.KeyMembershipChanged, &identityv1.MembershipChanged{TeamId: teamT, UserId: userU, AccountId: userU, Role: "admin"})

	if cache.Len() != 1 || cache.users() != 1 {
		t.Fatalf("%d cached for %d people after the change, want only the other person's", cache.Len(), cache.users())
	}
	if _, ok := cache.Get(sha256.Sum256([]byte("tok_v")), time.Now()); !ok {
		t.Fatal("another person's token was dropped")
	}
	mu.Lock()
	if !slices.Equal(changed, []string{userU}) {
		t.Fatalf("told of changes to %v, want [%s]", changed, userU)
	}
	mu.Unlock()
	p, err := a.Authenticate(ctx, "Bearer tok_u")
	if err != nil || p.Teams != teamT+":acme:admin" {
		t.Fatalf("after the change signed as %q (%v), want the new role", p.Teams, err)
	}
}

// A membership change that cannot be read might concern anyone: everything goes.
func TestUnreadableMembershipChangeFlushes(t *testing.T) {
	for name, body := range map[string][]byte{
		"garbage":    {0xff, 0xff, 0xff},
		"no user id": mustMarshal(t, &identityv1.MembershipChanged{TeamId: teamT}),
	} {
		t.Run(name, func(t *testing.T) {
			b := newFakeBus()
			cache := NewCache()
			rev := NewRevocations(b, cache, quiet)
			rev.timings = fast
			runRevocations(t, rev)
			testinfra.Eventually(t, time.Second, "trusted", func() bool { return rev.Trusted(time.Now()) })
			cache.Put(sha256.Sum256([]byte("svc_x")), alice().Principal(), time.Now().Add(time.Minute), cache.Generation())
			<-b.listening
			b.mu.Lock()
			fn := b.fn
			b.mu.Unlock()
			if err := fn(context.Background(), bus.Delivery{RoutingKey: identitybus.KeyMembershipChanged, Body: body}); err != nil {
				t.Fatal(err)
			}
			if cache.Len() != 0 {
				t.Fatal("an unreadable change left the cache as it was")
			}
		})
	}
}

// A change of roles that lands while identity's answer (with the old roles) is on its way
// wins: that answer serves its one request and is not kept.
func TestMembershipChangeDuringIntrospectionIsNotCached(t *testing.T) {
	id := newFakeIdentity(t)
	id.set("svc_deploy", scoped(time.Now().Add(time.Hour)))
	hold := make(chan struct{})
	id.hold = hold
	cache := NewCache()
	a := NewAuthenticator(id.client(), cache, trustAlways(true), time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := a.Authenticate(context.Background(), "Bearer svc_deploy")
		done <- err
	}()
	testinfra.Eventually(t, time.Second, "introspection in flight", func() bool { return id.calls.Load() == 1 })
	cache.EvictUser(userU) // nothing of theirs cached yet: still counts
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if cache.Len() != 0 {
		t.Fatal("an answer older than a change of roles was cached")
	}
}

// The by-user index follows the cache: revocations, supersession and sweeps leave no one
// indexed whose tokens are gone.
func TestUserIndexFollowsTheCache(t *testing.T) {
	c := NewCache()
	now := time.Now()
	p1 := scoped(now.Add(time.Hour)).Principal()
	c.Put(sha256.Sum256([]byte("a")), p1, now.Add(time.Minute), c.Generation())
	c.Evict(p1.TokenID)
	if c.Len() != 0 || c.users() != 0 {
		t.Fatalf("after a revocation %d cached, %d indexed", c.Len(), c.users())
	}
	c.Put(sha256.Sum256([]byte("a")), p1, now.Add(time.Second), c.Generation())
	c.Put(sha256.Sum256([]byte("b")), p1, now.Add(time.Minute), c.Generation()) // same token id, new hash
	if c.Len() != 1 || c.users() != 1 {
		t.Fatalf("after supersession %d cached, %d indexed", c.Len(), c.users())
	}
	c.Sweep(now.Add(2 * time.Minute))
	if c.Len() != 0 || c.users() != 0 {
		t.Fatalf("after a sweep %d cached, %d indexed", c.Len(), c.users())
	}
	c.Put(sha256.Sum256([]byte("a")), p1, now.Add(time.Minute), c.Generation())
	c.EvictUser(userU)
	c.Evict(p1.TokenID) // nothing left to find
	if c.Len() != 0 || c.users() != 0 {
		t.Fatalf("after a change of roles %d cached, %d indexed", c.Len(), c.users())
	}
}
