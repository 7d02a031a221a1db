package auth

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"tori.dev/pkg/bus"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
)

// Bus is the part of *bus.Conn the revocation listener needs.
type Bus interface {
	Connected() bool
	Listen(ctx context.Context, keys []string, fn func(ctx context.Context, d bus.Delivery) error) error
}

// timings of the trust rules; tests shorten them.
type timings struct {
	// watchEvery is how often the connection's state is checked between requests.
	watchEvery time.Duration
	// grace is how long after (re)connecting the cache stays unused: the listener's queue may
	// not be bound yet, and a revocation published meanwhile would be missed.
	grace time.Duration
	// relistenAfter is the pause before listening again when Listen fails.
	relistenAfter time.Duration
}

var defaultTimings = timings{watchEvery: 100 * time.Millisecond, grace: time.Second, relistenAfter: time.Second}

const never = math.MaxInt64

// Revocations evicts revoked tokens from the cache, and every token of a person whose roles
// changed (identity.membership.changed: each cached principal carries the roles it was
// introspected with), and says when the cache can be trusted: only while this instance is
// connected to the bus and listening, because only then does it hear every revocation and
// change. On any doubt the cache is flushed and every token re-introspected. With
// KeepAccounts it does the same for the gateway's copies of accounts, on
// identity.account.updated.
type Revocations struct {
	bus      Bus
	cache    *Cache
	accounts Accounts
	log      *slog.Logger
	timings  timings

	onRevoke func(tokenID string)
	onChange func(userID string)

	listening   atomic.Bool
	trustedFrom atomic.Int64 // unix nanoseconds; never while in doubt
}

// NewRevocations watches b for revocations evicting from cache.
func NewRevocations(b Bus, cache *Cache, log *slog.Logger) *Revocations {
	r := &Revocations{bus: b, cache: cache, log: log, timings: defaultTimings}
	r.trustedFrom.Store(never)
	return r
}

// Accounts is the gateway's copy of accounts (accountview.Cache), which the same events and
// the same doubts clear.
type Accounts interface {
	Evict(accountID string)
	Flush()
}

// KeepAccounts makes the listener also hear identity.account.updated and evict the account it
// names from a, and flush a with the token cache. Call it before Listen.
func (r *Revocations) KeepAccounts(a Accounts) { r.accounts = a }

// OnRevoke makes every revocation heard also call fn with the token's id (the gateway's
// open log streams end). Call it before Listen.
func (r *Revocations) OnRevoke(fn func(tokenID string)) { r.onRevoke = fn }

// OnMembershipChange makes every change of a person's memberships heard also call fn with
// their user id (the gateway's open log streams of that person end, to be reopened with the
// new roles). Call it before Listen.
func (r *Revocations) OnMembershipChange(fn func(userID string)) { r.onChange = fn }

// Trusted reports whether cached answers may be used at now.
func (r *Revocations) Trusted(now time.Time) bool {
	if !r.bus.Connected() || !r.listening.Load() {
		r.distrust()
		return false
	}
	return now.UnixNano() >= r.trustedFrom.Load()
}

// Listen hears revocations until ctx ends. When the bus drops the subscription the cache goes
// unused and listening starts again after a pause; only ctx ends it, so it runs as a part of
// the service's group, whose failure would stop the process.
func (r *Revocations) Listen(ctx context.Context) error {
	for {
		r.listening.Store(true)
		err := r.bus.Listen(ctx, r.keys(), r.handle)
		r.listening.Store(false)
		r.distrust()
		if ctx.Err() != nil {
			return nil
		}
		r.log.ErrorContext(ctx, "revocation listener stopped; token cache off until it is back", "err", errString(err))
		if !pause(ctx, r.timings.relistenAfter) {
			return nil
		}
	}
}

func (r *Revocations) keys() []string {
	keys := []string{identitybus.KeyTokenRevoked, identitybus.KeyMembershipChanged}
	if r.accounts != nil {
		keys = append(keys, identitybus.KeyAccountUpdated)
	}
	return keys
}

func (r *Revocations) handle(ctx context.Context, d bus.Delivery) error {
	switch d.RoutingKey {
	case identitybus.KeyAccountUpdated:
		return r.accountUpdated(ctx, d)
	case identitybus.KeyMembershipChanged:
		return r.membershipChanged(ctx, d)
	}
	var ev identityv1.TokenRevoked
	if err := d.Decode(&ev); err != nil {
		// Unreadable: the token it named cannot be found, so drop everything to be safe.
		r.log.ErrorContext(ctx, "undecodable revocation; flushing token cache", "err", err.Error())
		r.cache.Flush()
		return nil
	}
	r.cache.Evict(ev.GetTokenId())
	if r.onRevoke != nil {
		r.onRevoke(ev.GetTokenId())
	}
	return nil
}

// membershipChanged drops every cached token of the person whose role in a team changed (or
// who left it), wherever the change was made: their next request is introspected and signed
// with the new roles, within a second of the change as revocations are.
func (r *Revocations) membershipChanged(ctx context.Context, d bus.Delivery) error {
	var ev identityv1.MembershipChanged
	err := d.Decode(&ev)
	if err == nil && ev.GetUserId() == "" {
		err = errors.New("no user id")
	}
	if err != nil {
		// Whose roles changed is unknown: every cached role may be stale.
		r.log.ErrorContext(ctx, "unreadable membership change; flushing token cache", "err", err.Error())
		r.flush()
		return nil
	}
	r.cache.EvictUser(ev.GetUserId())
	if r.accounts != nil && ev.GetAccountId() != "" {
		// The account's view may list the person's teams.
		r.accounts.Evict(ev.GetAccountId())
	}
	if r.onChange != nil {
		r.onChange(ev.GetUserId())
	}
	return nil
}

// accountUpdated is only subscribed with KeepAccounts (keys), so r.accounts is set.
func (r *Revocations) accountUpdated(ctx context.Context, d bus.Delivery) error {
	var ev identityv1.AccountUpdated
	if err := d.Decode(&ev); err != nil {
		r.log.ErrorContext(ctx, "undecodable account update; flushing account views", "err", err.Error())
		r.accounts.Flush()
		return nil
	}
	r.accounts.Evict(ev.GetAccountId())
	return nil
}

// flush drops everything cached: tokens and, when kept, accounts.
func (r *Revocations) flush() {
	r.cache.Flush()
	if r.accounts != nil {
		r.accounts.Flush()
	}
}

// Watch flushes the cache as soon as the connection is lost, and trusts it again a grace
// period after it is back, until ctx ends. It polls an in-memory flag every watchEvery, so it
// is a part of the group and not a lifecycle.Job: a span and a log context per round, ten
// times a second, would record nothing but noise.
func (r *Revocations) Watch(ctx context.Context) error {
	for pause(ctx, r.timings.watchEvery) {
		r.check()
	}
	return nil
}

func (r *Revocations) check() {
	if !r.bus.Connected() || !r.listening.Load() {
		r.distrust()
		return
	}
	if r.trustedFrom.Load() == never {
		r.flush()
		r.trustedFrom.CompareAndSwap(never, time.Now().Add(r.timings.grace).UnixNano())
	}
}

// pause waits d, reporting false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// distrust stops cache use and drops what it holds, once per loss.
func (r *Revocations) distrust() {
	if r.trustedFrom.Swap(never) != never {
		r.flush()
	}
}

func errString(err error) string {
	if err == nil {
		return "listen returned"
	}
	return err.Error()
}
