package httpapi

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/services/gateway/internal/accountview"
	"tori.dev/services/gateway/internal/routes"
)

// AccountViews is the gateway's copy of identity's answers to GET /api/account, and whether it
// may be used now: only while the listener that hears identity.account.updated runs (the
// token cache's trust, auth.Revocations).
type AccountViews struct {
	Cache   *accountview.Cache
	Trusted func(now time.Time) bool
}

// accountRoute says whether m is the caller's account (GET or PATCH /api/account).
func accountRoute(m routes.Match) bool {
	return m.Route != nil && m.Route.Owner == routes.Identity && m.Route.Template == "/api/account"
}

// fromAccountCopy answers GET /api/account from the copy when it has a fresh one it may use,
// reporting whether it did. A read with a query goes to identity: the copy answers one URL.
func (s *Server) fromAccountCopy(c *fiber.Ctx, accountID string) bool {
	if c.Method() != fiber.MethodGet || len(c.Request().URI().QueryString()) > 0 {
		return false
	}
	now := time.Now()
	if !s.Accounts.Trusted(now) {
		return false
	}
	v, ok := s.Accounts.Cache.Get(accountID, now)
	if !ok {
		return false
	}
	c.Status(http.StatusOK)
	c.Response().Header.SetContentType(v.ContentType)
	c.Response().SetBodyRaw(v.Body) // never written to: the kept body is shared by readers
	return true
}

// accountKeeper watches identity answer GET /api/account and keeps a whole 200 in the copy,
// unless a change was announced since the read began (the generation) or the copy may not be
// used any more.
type accountKeeper struct {
	capture   // the answer, up to accountview.MaxBody
	views     *AccountViews
	accountID string
	gen       uint64
}

func (s *Server) keepAccount(accountID string) *accountKeeper {
	return &accountKeeper{capture: capture{max: accountview.MaxBody}, views: s.Accounts, accountID: accountID, gen: s.Accounts.Cache.Generation()}
}

func (k *accountKeeper) RequestBody([]byte) {}

func (k *accountKeeper) Done(_, responseComplete bool, err error) {
	status, contentType, body, tooLarge := k.answer()
	now := time.Now()
	if err != nil || !responseComplete || status != http.StatusOK || tooLarge || len(body) == 0 || !k.views.Trusted(now) {
		return
	}
	k.views.Cache.Put(k.accountID, accountview.View{ContentType: contentType, Body: body}, now, k.gen)
}
