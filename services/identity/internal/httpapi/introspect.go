package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/apitime"
)

// introspect is the gateway's token check (docs/conventions.md, "Gateway to service").
func (h handlers) introspect(c *fiber.Ctx) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	p, err := h.svc.Introspect(c.UserContext(), req.Token)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		AccountID string        `json:"accountId"`
		UserID    string        `json:"userId"`
		TokenKind string        `json:"tokenKind"`
		TokenID   string        `json:"tokenId"`
		ExpiresAt *apitime.Time `json:"expiresAt"`
	}{p.AccountID, p.UserID, p.Kind, p.TokenID, apitime.OrNull(p.ExpiresAt)})
}
