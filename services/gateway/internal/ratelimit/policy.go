package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"time"
)

// The contract's limits ("Limits" and decisions.md "Everything").
const (
	ReadsPerMinute  = 600
	WritesPerMinute = 120
	AccountWindow   = time.Minute
	AddressWindow   = 15 * time.Minute
)

// PublicPerMinute is the per-address window of each public operation (GET /api/plans,
// /api/openapi.json, the auth routes, the payment webhook): a flood of requests that need no
// token stays with the address it comes from. A person, a CLI polling the token exchange at
// its 5-second interval (12 a minute), or the payment provider's webhook deliveries are far
// below it; so are some fifty such clients behind one address.
const PublicPerMinute = 600

// The budget of refused tokens per client address: after UnauthorizedBudget answers of 401
// within UnauthorizedWindow, an address's further requests that need a token answer 429
// without identity being asked, until the window ends. A person retyping a token or a CI job
// with a stale secret stays far below it; a scanner trying random tokens does not.
const (
	UnauthorizedBudget = 100
	UnauthorizedWindow = 15 * time.Minute
)

// Refusal codes: every limit answers rate_limited, except the command-line token exchange,
// which RFC 8628 pollers expect to answer slow_down.
const (
	CodeRateLimited = "rate_limited"
	CodeSlowDown    = "slow_down"
)

// Exceeded is a refused request: over a limit until RetryAfter seconds have passed.
type Exceeded struct {
	Code       string
	RetryAfter int // whole seconds, at least 1
}

func (e *Exceeded) Error() string { return "ratelimit: " + e.Code }

// Policy applies the contract's limits to operations. Operations are "METHOD template", so
// each has its own window, and one busy operation never starves another.
type Policy struct {
	limiter      Limiter
	addressLimit int64
	log          *slog.Logger
}

// NewPolicy applies addressLimit (AUTH_LIMIT_PER_15MIN) to each per-address bucket.
func NewPolicy(l Limiter, addressLimit int, log *slog.Logger) *Policy {
	return &Policy{limiter: l, addressLimit: int64(addressLimit), log: log}
}

// Account counts one request of an authenticated account against the operation's window.
func (p *Policy) Account(ctx context.Context, accountID, op string, read bool) error {
	limit := int64(WritesPerMinute)
	if read {
		limit = ReadsPerMinute
	}
	c, err := p.limiter.Hit(ctx, "acct "+accountID+" "+op, AccountWindow)
	return p.decide(ctx, c, err, limit, CodeRateLimited)
}

// Address counts one request from addr against the operation's 15-minute bucket.
func (p *Policy) Address(ctx context.Context, addr, op string) error {
	c, err := p.limiter.Hit(ctx, addressKey(addr, op), AddressWindow)
	return p.decide(ctx, c, err, p.addressLimit, CodeRateLimited)
}

// Public counts one request from addr against the public operation's minute window; over it
// the answer is code (slow_down on the token exchange, rate_limited elsewhere).
func (p *Policy) Public(ctx context.Context, addr, op, code string) error {
	c, err := p.limiter.Hit(ctx, "pub "+addr+" "+op, AccountWindow)
	return p.decide(ctx, c, err, PublicPerMinute, code)
}

// AddressOpen refuses with slow_down when addr's bucket for op is already full, without
// counting: on the token exchange only some answers count, and that is known only afterwards.
func (p *Policy) AddressOpen(ctx context.Context, addr, op string) error {
	c, err := p.limiter.Peek(ctx, addressKey(addr, op), AddressWindow)
	// The bucket holds addressLimit counted requests; the next one is over it.
	c.N++
	return p.decide(ctx, c, err, p.addressLimit, CodeSlowDown)
}

// UnauthorizedOpen refuses (rate_limited) when addr has used up its budget of 401s, without
// counting: only a request that turns out unauthorized counts (CountUnauthorized).
func (p *Policy) UnauthorizedOpen(ctx context.Context, addr string) error {
	c, err := p.limiter.Peek(ctx, unauthorizedKey(addr), UnauthorizedWindow)
	c.N++
	return p.decide(ctx, c, err, UnauthorizedBudget, CodeRateLimited)
}

// CountUnauthorized adds one 401 to addr's budget.
func (p *Policy) CountUnauthorized(ctx context.Context, addr string) {
	if _, err := p.limiter.Hit(ctx, unauthorizedKey(addr), UnauthorizedWindow); err != nil {
		p.log.ErrorContext(ctx, "rate limiter unavailable; 401 not counted", "err", err.Error())
	}
}

func unauthorizedKey(addr string) string { return "unauth " + addr }

// CountAddress adds a request to addr's bucket after the fact.
func (p *Policy) CountAddress(ctx context.Context, addr, op string) {
	if _, err := p.limiter.Hit(ctx, addressKey(addr, op), AddressWindow); err != nil {
		p.log.ErrorContext(ctx, "rate limiter unavailable; request not counted", "err", err.Error())
	}
}

func addressKey(addr, op string) string { return "addr " + addr + " " + op }

// decide fails open when the counters cannot be reached: the limits protect capacity, and
// refusing every request while the counters' store (Redis) is away would turn its outage
// into ours.
func (p *Policy) decide(ctx context.Context, c Count, err error, limit int64, code string) error {
	if err != nil {
		p.log.ErrorContext(ctx, "rate limiter unavailable; request allowed", "err", err.Error())
		return nil
	}
	if c.N <= limit {
		return nil
	}
	return &Exceeded{Code: code, RetryAfter: retryAfter(c.ResetIn)}
}

// retryAfter rounds up to whole seconds, at least 1, as the Retry-After header needs.
func retryAfter(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}
