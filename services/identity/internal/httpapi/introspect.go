package httpapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/services/identity/internal/auth"
)

// HeaderTokenUnknown marks introspection's 401 as identity's verdict on the token. A 401
// without it (a refused gateway signature, from the middleware) says nothing about the
// token, and the gateway must not remember the token as unknown or answer its client 401.
const HeaderTokenUnknown = "X-Tori-Token-Unknown"

// HeaderTokenExpired, with HeaderTokenUnknown, marks introspection's 401 for a scoped token
// past its end, so the gateway answers its client token_expired rather than unauthorized
// (docs/conventions.md, "Gateway to service").
const HeaderTokenExpired = "X-Tori-Token-Expired"

// introspectTeamJSON is one of the principal's teams as the gateway signs it (callerid.EncodeTeams).
type introspectTeamJSON struct {
	ID       string `json:"id"`
	Slug     string `json:"slug"`
	Role     string `json:"role"`
	Personal bool   `json:"personal"`
}

// introspect is the gateway's token check (docs/conventions.md, "Gateway to service").
func (h handlers) introspect(c *fiber.Ctx) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	p, err := h.svc.Introspect(c.UserContext(), req.Token)
	if errors.Is(err, auth.ErrUnauthorized) || errors.Is(err, auth.ErrTokenExpired) {
		c.Set(HeaderTokenUnknown, "1")
	}
	if errors.Is(err, auth.ErrTokenExpired) {
		c.Set(HeaderTokenExpired, "1")
	}
	if err != nil {
		return err
	}
	teams := make([]introspectTeamJSON, 0, len(p.Teams))
	for _, m := range p.Teams {
		teams = append(teams, introspectTeamJSON{m.TeamID, m.Slug, m.Role.String(), m.Personal})
	}
	return c.JSON(struct {
		AccountID string               `json:"accountId"`
		UserID    string               `json:"userId"`
		TokenKind string               `json:"tokenKind"`
		TokenID   string               `json:"tokenId"`
		ExpiresAt *apitime.Time        `json:"expiresAt"`
		Teams     []introspectTeamJSON `json:"teams"`
		Scope     string               `json:"scope"`
		Apps      []string             `json:"apps"`
	}{p.AccountID, p.UserID, p.Kind, p.TokenID, apitime.OrNull(p.ExpiresAt), teams, p.Scope, p.Apps})
}
