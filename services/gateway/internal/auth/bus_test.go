package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/gateway/internal/accountview"
)

// These tests run the real bus: identity's side is an outbox and relay in a schema of the
// test's own, and each gateway instance has its own connection, cache and listener.

var revoker = pgstore.Service{Schema: "revoker", Role: "tori_test_revoker"}

func busConfig(t *testing.T) bus.Config { return testinfra.BusConfig(t) }

func dialBus(t *testing.T, cfg bus.Config) *bus.Conn {
	t.Helper()
	return testinfra.DialBus(t, cfg, quiet)
}

// publisher is identity's half: it publishes revocations through the outbox.
func publisher(t *testing.T, cfg bus.Config) func(tokenID string) {
	t.Helper()
	publish := outbox(t, cfg)
	return func(tokenID string) {
		t.Helper()
		publish(identitybus.KeyTokenRevoked, &identityv1.TokenRevoked{TokenId: tokenID, AccountId: "acct-a"})
	}
}

// outbox publishes any of identity's events through an outbox and relay.
func outbox(t *testing.T, cfg bus.Config) func(key string, m proto.Message) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fp, err := pgstore.Fingerprint(bus.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "gateway_revoker_"+fp, func(ctx context.Context, url string) error {
		pool, err := pgstore.Setup(ctx, url, revoker, pgstore.WithMigrations(bus.Migrations))
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	pool, err := pgstore.Setup(ctx, admin, revoker, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	conn := dialBus(t, cfg)
	go func() { _ = bus.NewRelay(conn, pool, quiet).Run(ctx) }()
	return func(key string, m proto.Message) {
		t.Helper()
		if err := publish(ctx, pool, key, m); err != nil {
			t.Fatal(err)
		}
	}
}

func publish(ctx context.Context, pool *pgxpool.Pool, key string, m proto.Message) error {
	return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, key, m) })
}

type instance struct {
	cache    *Cache
	accounts *accountview.Cache
	rev      *Revocations
	auth     *Authenticator
}

func newInstance(t *testing.T, conn *bus.Conn, id *fakeIdentity, tm timings) *instance {
	cache := NewCache()
	accounts := accountview.New(time.Minute)
	rev := NewRevocations(conn, cache, quiet)
	rev.KeepAccounts(accounts)
	rev.timings = tm
	runRevocations(t, rev)
	return &instance{cache: cache, accounts: accounts, rev: rev, auth: NewAuthenticator(id.client(), cache, rev, time.Minute)}
}

// keeps reports whether the instance holds a view of accountID.
func (in *instance) keeps(accountID string) bool {
	_, ok := in.accounts.Get(accountID, time.Now())
	return ok
}

func (in *instance) keep(accountID string) {
	in.accounts.Put(accountID, accountview.View{ContentType: "application/json", Body: []byte(`{"plan":"nestling"}`)}, time.Now(), in.accounts.Generation())
}

// identity.account.updated (a change of region or plan) drops that account's view at every
// instance within a second, and no other account's.
func TestAccountUpdateDropsTheViewAtEveryInstance(t *testing.T) {
	cfg := busConfig(t)
	publish := outbox(t, cfg)
	id := newFakeIdentity(t)
	const a, b = "0190f5e4-0000-7000-8000-00000000000a", "0190f5e4-0000-7000-8000-00000000000b"
	instances := []*instance{
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
	}
	for _, in := range instances {
		testinfra.Eventually(t, 10*time.Second, "instance trusts its caches", func() bool { return in.rev.Trusted(time.Now()) })
		in.keep(a)
		in.keep(b)
	}
	publish(identitybus.KeyAccountUpdated, &identityv1.AccountUpdated{AccountId: a, DefaultRegion: "us"})
	start := time.Now()
	for _, in := range instances {
		testinfra.Eventually(t, time.Second-time.Since(start), "account update drops the view", func() bool { return !in.keeps(a) })
		if !in.keeps(b) {
			t.Fatal("another account's view dropped")
		}
	}
}

func (in *instance) cached(token string) bool {
	_, ok := in.cache.Get(sha256.Sum256([]byte(token)), time.Now())
	return ok
}

func TestRevocationReachesEveryInstanceWithinOneSecond(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := busConfig(t)
	publish := publisher(t, cfg)
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())

	instances := []*instance{
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
	}
	for _, in := range instances {
		testinfra.Eventually(t, 10*time.Second, "instance trusts its cache", func() bool { return in.rev.Trusted(time.Now()) })
		if _, err := in.auth.Authenticate(ctx, "Bearer svc_alice"); err != nil {
			t.Fatal(err)
		}
		if !in.cached("svc_alice") {
			t.Fatal("token not cached")
		}
	}

	id.remove("svc_alice")
	publish("tokid-a")
	start := time.Now()
	for i, in := range instances {
		testinfra.Eventually(t, time.Second-time.Since(start), "revocation evicts at instance", func() bool { return !in.cached("svc_alice") })
		if _, err := in.auth.Authenticate(ctx, "Bearer svc_alice"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("instance %d still accepts the revoked token: %v", i, err)
		}
	}
	t.Logf("evicted at every instance within %s", time.Since(start))
}

// A broker connection lost and regained: revocations sent meanwhile are lost with the
// instance's queue, so the cache must be dropped and stay unused until listening resumes.
func TestConnectionLossDropsTheCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := busConfig(t)
	publish := publisher(t, cfg)
	id := newFakeIdentity(t)
	id.set("svc_alice", alice())

	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testinfra.NewProxy(t, u.Host)
	viaProxy := cfg
	u.Host = proxy.Addr()
	viaProxy.URL = u.String()
	in := newInstance(t, dialBus(t, viaProxy), id, fast)

	testinfra.Eventually(t, 10*time.Second, "trusted", func() bool { return in.rev.Trusted(time.Now()) })
	if _, err := in.auth.Authenticate(ctx, "Bearer svc_alice"); err != nil || !in.cached("svc_alice") {
		t.Fatalf("not cached: %v", err)
	}

	in.keep("0190f5e4-0000-7000-8000-00000000000a")
	proxy.Down()
	testinfra.Eventually(t, 5*time.Second, "untrusted while the broker is away", func() bool { return !in.rev.Trusted(time.Now()) })
	if in.cache.Len() != 0 {
		t.Fatal("cache kept while revocations cannot arrive")
	}
	if in.keeps("0190f5e4-0000-7000-8000-00000000000a") {
		t.Fatal("account view kept while account updates cannot arrive")
	}
	calls := id.calls.Load()
	if _, err := in.auth.Authenticate(ctx, "Bearer svc_alice"); err != nil || id.calls.Load() != calls+1 {
		t.Fatal("while disconnected every request must be introspected")
	}

	proxy.Up()
	testinfra.Eventually(t, 30*time.Second, "trusted again after reconnecting", func() bool { return in.rev.Trusted(time.Now()) })
	if _, err := in.auth.Authenticate(ctx, "Bearer svc_alice"); err != nil || !in.cached("svc_alice") {
		t.Fatalf("not cached after reconnecting: %v", err)
	}
	// The listener is subscribed again: a revocation still arrives.
	id.remove("svc_alice")
	publish("tokid-a")
	testinfra.Eventually(t, 2*time.Second, "revocation after reconnect evicts", func() bool { return !in.cached("svc_alice") })
}

// A change of a member's role, published once by identity, reaches every gateway within a
// second: each drops that person's cached tokens and signs their next request with the new
// role.
func TestMembershipChangeReachesEveryInstanceWithinOneSecond(t *testing.T) {
	ctx := context.Background()
	cfg := busConfig(t)
	publish := outbox(t, cfg)
	id := newFakeIdentity(t)
	const user, team = "0190f5e4-0000-7000-8000-0000000000d4", "0190f5e4-0000-7000-8000-0000000000e5"
	dev := Introspection{AccountID: user, UserID: user, TokenKind: "api", TokenID: "tokid-d",
		Teams: []TeamRole{{ID: team, Slug: "acme", Role: "developer"}}}
	id.set("svc_dev", dev)
	instances := []*instance{
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
		newInstance(t, dialBus(t, cfg), id, defaultTimings),
	}
	for _, in := range instances {
		testinfra.Eventually(t, 10*time.Second, "instance trusts its cache", func() bool { return in.rev.Trusted(time.Now()) })
		if _, err := in.auth.Authenticate(ctx, "Bearer svc_dev"); err != nil || !in.cached("svc_dev") {
			t.Fatalf("not cached: %v", err)
		}
	}
	viewer := dev
	viewer.Teams = []TeamRole{{ID: team, Slug: "acme", Role: "viewer"}}
	id.set("svc_dev", viewer)
	publish(identitybus.KeyMembershipChanged, &identityv1.MembershipChanged{TeamId: team, UserId: user, AccountId: user, Role: "viewer"})
	start := time.Now()
	for i, in := range instances {
		testinfra.Eventually(t, time.Second-time.Since(start), "membership change evicts at instance", func() bool { return !in.cached("svc_dev") })
		p, err := in.auth.Authenticate(ctx, "Bearer svc_dev")
		if err != nil || p.Teams != team+":acme:viewer" {
			t.Fatalf("instance %d signs %q (%v), want the new role", i, p.Teams, err)
		}
	}
	t.Logf("new role at every instance within %s", time.Since(start))
}
