package httpapi

import (
	"context"
	"errors"
	"net/netip"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/routes"
)

// dispatch is the pipeline: per-address bucket, authentication, per-account window, forward.
// The per-address bucket comes first so that guessing at the sign-in routes is limited even
// without a token; authentication comes before the account window, so a 401 counts against no
// account.
func (s *Server) dispatch(ctx context.Context, c *fiber.Ctx, m routes.Match) error {
	if m.Route != nil && m.Route.Owner == routes.Local {
		return s.local(c, m.Route)
	}

	var addr string
	if b := m.Bucket(); b != routes.NoBucket {
		addr = s.clientAddr(c)
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

	var caller callerid.Caller // empty, still signed, on public routes
	if !m.Public() {
		// An address that has collected its budget of 401s is refused before identity is
		// asked, so guessing tokens costs the guesser, not identity.
		if addr == "" {
			addr = s.clientAddr(c)
		}
		if err := s.Limits.UnauthorizedOpen(ctx, addr); err != nil {
			proxy.Discard(c)
			return err
		}
		var err error
		if caller, err = s.Auth.Authenticate(ctx, c.Get(fiber.HeaderAuthorization)); err != nil {
			if errors.Is(err, auth.ErrUnauthorized) {
				s.Limits.CountUnauthorized(ctx, addr)
			}
			proxy.Discard(c)
			return err
		}
		if err := s.Limits.Account(ctx, caller.AccountID, m.Op, routes.IsRead(c.Method())); err != nil {
			proxy.Discard(c)
			return err
		}
	}

	base, ok := s.Upstreams[m.Owner]
	if !ok {
		proxy.Discard(c)
		return errNoRoute
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
	if m.Bucket() == routes.CountFlagged && res.CountBucket {
		s.Limits.CountAddress(ctx, addr, m.Op)
	}
	return nil
}

func (s *Server) clientAddr(c *fiber.Ctx) string {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	var xff []string
	for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		xff = append(xff, string(v))
	}
	return s.ClientIP.Resolve(peer, xff).String()
}
