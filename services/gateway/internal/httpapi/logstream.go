package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/routes"
)

// forwardStream forwards a log stream. It takes one of the account's stream places first
// (429 too_many_streams when none is left, counting every gateway's); the place is held while
// the answer streams and freed when it ends, and the stream is ended here, with its final
// event, when its token is revoked or expires or the gateway stops. The per-account read
// window counted it once, when it opened.
func (s *Server) forwardStream(ctx context.Context, c *fiber.Ctx, m routes.Match, base string, who auth.Principal) error {
	st, err := s.Streams.OpenFor(ctx, who.AccountID, who.UserID, who.TokenID, who.Expires)
	if err != nil {
		return err
	}
	res, err := s.Proxy.ForwardWrapped(ctx, c, base, who.Caller, st.Wrap)
	if err != nil || res.Status != http.StatusOK {
		st.Release() // nothing was wrapped: no stream holds the place
	}
	if errors.Is(err, proxy.ErrUpstream) {
		return &unavailable{owner: m.Owner, err: err}
	}
	return err
}
