package httpapi

import (
	"context"
	"errors"
	"net/netip"

	"github.com/gofiber/fiber/v2"

	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/routes"
)

// dispatch is the pipeline: per-address bucket, authentication (with the per-address budget of
// 401s applied to refused tokens only), per-account window, forward.
// The per-address bucket comes first so that guessing at the sign-in routes is limited even
// without a token; authentication comes before the account window, so a 401 counts against no
// account.
func (s *Server) dispatch(ctx context.Context, c *fiber.Ctx, m routes.Match) error {
	var addr string
	if m.AddressWindow() {
		addr = s.clientAddr(c)
		code := ratelimit.CodeRateLimited
		if m.Bucket() == routes.CountFlagged {
			code = ratelimit.CodeSlowDown
		}
		if err := s.Limits.Public(ctx, addr, m.Op, code); err != nil {
			proxy.Discard(c)
			return err
		}
	}
	if m.Route != nil && m.Route.Owner == routes.Local {
		return s.local(c, m.Route)
	}

	if b := m.Bucket(); b != routes.NoBucket {
		if addr == "" {
			addr = s.clientAddr(c)
		}
		var err error
		if b == routes.CountFlagged {
			err = s.Limits.AddressOpen(ctx, addr, m.Op)
		} else {
			err = s.Limits.Address(ctx, addr, m.Op)
		}
		if err != nil {
			proxy.Discard(c)
			return err
		}
	}

	var who auth.Principal // empty, still signed, on public routes
	if !m.Public() {
		var err error
		if who, err = s.Auth.Authenticate(ctx, c.Get(fiber.HeaderAuthorization)); err != nil {
			if errors.Is(err, auth.ErrUnauthorized) {
				err = s.refused(ctx, c, &addr, err)
			}
			proxy.Discard(c)
			return err
		}
		if err := s.Limits.Account(ctx, who.AccountID, m.Op, routes.IsRead(c.Method())); err != nil {
			proxy.Discard(c)
			return err
		}
		// The address the request came from, signed with the caller for the services' audit
		// entries: the client's own, not the bucket the limits count it in.
		if ip := s.clientIP(c); ip.IsValid() {
			who.ClientIP = ip.String()
		}
	}
	caller := who.Caller

	base, ok := s.Upstreams[m.Owner]
	if !ok {
		proxy.Discard(c)
		return errNoRoute
	}
	if s.Streams != nil && m.Route != nil && m.Route.Template == routes.LogStream {
		return s.forwardStream(ctx, c, m, base, who)
	}
	var obs proxy.Observer
	if s.Accounts != nil && accountRoute(m) {
		switch c.Method() {
		case fiber.MethodGet:
			if s.fromAccountCopy(c, caller.AccountID) {
				return nil
			}
			obs = s.keepAccount(caller.AccountID)
		case fiber.MethodHead: // identity's to answer; it changes nothing
		default:
			// A change of the account through this gateway: once identity has answered, it
			// committed, so the copy goes and the caller reads its own write at once (other
			// gateways drop theirs on identity.account.updated).
			defer s.Accounts.Cache.Evict(caller.AccountID)
		}
	}
	var (
		res proxy.Result
		err error
	)
	if key := c.Get(idempotency.Header); key != "" && c.Method() == fiber.MethodPost && s.Idempotency != nil {
		res, err = s.forwardOnce(ctx, c, m, base, caller, addr, key)
	} else {
		res, err = s.Proxy.Forward(ctx, c, base, caller, obs)
	}
	if errors.Is(err, proxy.ErrUpstream) {
		return &unavailable{owner: m.Owner, err: err}
	}
	if err != nil {
		return err
	}
	s.forgetRevoked(m, string(c.Request().URI().PathOriginal()), caller, res.Status)
	if m.Bucket() == routes.CountFlagged && res.CountBucket {
		s.Limits.CountAddress(ctx, addr, m.Op)
	}
	return nil
}

// refused answers a request whose token is not valid: 401 (refusal, which says whether the
// token expired), or 429 once its address has earned its budget of 401s. The budget is applied only after the token is known to be bad,
// so a valid token is never refused for what other requests from its address did (offices,
// CI fleets and carriers share addresses); a token refused before is refused again without
// asking identity (auth.Unknown), so guessing the same tokens costs the guesser alone.
func (s *Server) refused(ctx context.Context, c *fiber.Ctx, addr *string, refusal error) error {
	if *addr == "" {
		*addr = s.clientAddr(c)
	}
	if err := s.Limits.UnauthorizedOpen(ctx, *addr); err != nil {
		return err
	}
	s.Limits.CountUnauthorized(ctx, *addr)
	return refusal
}

// clientAddr is the bucket the per-address limits count the request's client in.
func (s *Server) clientAddr(c *fiber.Ctx) string { return clientip.Bucket(s.clientIP(c)) }

// clientIP is the request's client address (clientip.Resolver: the peer, or what trusted
// proxies say it is).
func (s *Server) clientIP(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	var xff []string
	for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		xff = append(xff, string(v))
	}
	return s.ClientIP.Resolve(peer, xff)
}
