package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/callerid"
)

type tokenJSON struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Prefix     string        `json:"prefix"`
	CreatedAt  apitime.Time  `json:"createdAt"`
	LastUsedAt *apitime.Time `json:"lastUsedAt"`
}

func (h handlers) listTokens(c *fiber.Ctx) error {
	ts, err := h.svc.ListTokens(c.UserContext(), callerid.From(c))
	if err != nil {
		return err
	}
	out := make([]tokenJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, tokenJSON{t.ID, t.Name, t.Prefix, apitime.Time(t.CreatedAt), apitime.OrNull(t.LastUsedAt)})
	}
	return c.JSON(out)
}

func (h handlers) createToken(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	t, secret, err := h.svc.CreateToken(c.UserContext(), callerid.From(c), req.Name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(struct {
		ID        string       `json:"id"`
		Name      string       `json:"name"`
		Prefix    string       `json:"prefix"`
		CreatedAt apitime.Time `json:"createdAt"`
		Token     string       `json:"token"`
	}{t.ID, t.Name, t.Prefix, apitime.Time(t.CreatedAt), secret})
}

func (h handlers) revokeToken(c *fiber.Ctx) error {
	if err := h.svc.RevokeToken(c.UserContext(), callerid.From(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
