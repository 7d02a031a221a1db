package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"time"
)

// Trust says whether cached answers may be used now; Revocations is the real one.
type Trust interface {
	Trusted(now time.Time) bool
}

// Authenticator answers who a bearer token belongs to.
type Authenticator struct {
	identity Introspector
	cache    *Cache
	trust    Trust
	ttl      time.Duration
	unknown  *Unknown
	now      func() time.Time
}

// NewAuthenticator caches identity's answers for ttl (0: never) while trust allows.
func NewAuthenticator(identity Introspector, cache *Cache, trust Trust, ttl time.Duration) *Authenticator {
	return &Authenticator{identity: identity, cache: cache, trust: trust, ttl: ttl, unknown: NewUnknown(NegativeTTL), now: time.Now}
}

// Authenticate returns the principal of an Authorization header value.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string) (Principal, error) {
	tok, ok := BearerToken(authorization)
	if !ok {
		return Principal{}, ErrUnauthorized
	}
	h := sha256.Sum256([]byte(tok))
	now := a.now()
	useCache := a.ttl > 0 && a.trust.Trusted(now)
	if useCache {
		if c, ok := a.cache.Get(h, now); ok {
			return c, nil
		}
		// An entry never outlives its token's end, so one gone stale at that end says the
		// token has expired: answered here, as identity would, without asking it.
		if c, ok := a.cache.Ended(h, now); ok {
			err := refusalAtEnd(c.TokenKind)
			a.unknown.AddRefusal(h, now, err)
			return Principal{}, err
		}
	}
	// A token identity refused moments ago is refused again without asking, for the same
	// reason (an expired one stays token_expired): revocation only ever makes tokens invalid,
	// so this answer cannot go stale the dangerous way.
	if err := a.unknown.Refusal(h, now); err != nil {
		return Principal{}, err
	}
	gen := a.cache.Generation()

	in, err := a.identity.Introspect(ctx, tok)
	if errors.Is(err, ErrUnauthorized) {
		a.unknown.AddRefusal(h, now, err)
	}
	if err != nil {
		return Principal{}, err
	}
	caller := in.Principal()
	if caller.expiredAt(now) {
		// Identity's clock and ours disagree by the moment: ours decides, as it will for the
		// cached entry's end.
		return Principal{}, refusalAtEnd(caller.TokenKind)
	}
	if useCache && a.trust.Trusted(a.now()) {
		// Never past the token's own end: an expired session must not live on in the cache.
		// Less up to a fifth at random: tokens cached together (a burst of sign-ins, a
		// restart) then expire over a spread instead of all asking identity at once.
		until := now.Add(a.ttl - rand.N(a.ttl/5+1))
		if !caller.Expires.IsZero() && caller.Expires.Before(until) {
			until = caller.Expires
		}
		a.cache.Put(h, caller, until, gen)
	}
	return caller, nil
}
