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
	}
	// A token identity refused moments ago is refused again without asking: revocation only
	// ever makes tokens invalid, so this answer cannot go stale the dangerous way.
	if a.unknown.Has(h, now) {
		return Principal{}, ErrUnauthorized
	}
	gen := a.cache.Generation()

	in, err := a.identity.Introspect(ctx, tok)
	if errors.Is(err, ErrUnauthorized) {
		a.unknown.Add(h, now)
	}
	if err != nil {
		return Principal{}, err
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return Principal{}, ErrUnauthorized
	}
	caller := in.Principal()
	if useCache && a.trust.Trusted(a.now()) {
		// Never past the token's own end: an expired session must not live on in the cache.
		// Less up to a fifth at random: tokens cached together (a burst of sign-ins, a
		// restart) then expire over a spread instead of all asking identity at once.
		until := now.Add(a.ttl - rand.N(a.ttl/5+1))
		if in.ExpiresAt != nil && in.ExpiresAt.Before(until) {
			until = *in.ExpiresAt
		}
		a.cache.Put(h, caller, until, gen)
	}
	return caller, nil
}
