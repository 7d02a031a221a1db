package httpapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/access"
	"tori.dev/contract/apitime"
	"tori.dev/services/identity/internal/auth"
)

// HeaderTokenUnknown marks introspection's 401 as identity's verdict on the token. A 401
// without it (a refused gateway signature, from the middleware) says nothing about the
// token, and the gateway must not remember the token as unknown or answer its client 401.
const HeaderTokenUnknown = "X-Tori-Token-Unknown"

// introspect is the gateway's token check (docs/conventions.md, "Gateway to service").
func (h handlers) introspect(c *fiber.Ctx) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	p, err := h.svc.Introspect(c.UserContext(), req.Token)
	if errors.Is(err, auth.ErrUnauthorized) {
		c.Set(HeaderTokenUnknown, "1")
	}
	if err != nil {
		return err
	}
	return c.JSON(struct {
		AccountID string               `json:"accountId"`
		UserID    string               `json:"userId"`
		TokenKind string               `json:"tokenKind"`
		TokenID   string               `json:"tokenId"`
		ExpiresAt *apitime.Time        `json:"expiresAt"`
		Teams     []introspectTeamJSON `json:"teams"`
	}{p.AccountID, p.UserID, p.Kind, p.TokenID, apitime.OrNull(p.ExpiresAt), introspectTeams(p.Teams)})
}

// introspectTeamJSON is one membership the gateway signs into X-Tori-Teams.
type introspectTeamJSON struct {
	ID       string `json:"id"`
	Slug     string `json:"slug"`
	Role     string `json:"role"`
	Personal bool   `json:"personal"`
}

func introspectTeams(ms []access.Membership) []introspectTeamJSON {
	out := make([]introspectTeamJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, introspectTeamJSON{ID: m.TeamID, Slug: m.Slug, Role: m.Role.String(), Personal: m.Personal})
	}
	return out
}
