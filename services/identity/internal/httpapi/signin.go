package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/callerid"
)

type userJSON struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

func (h handlers) requestMagicLink(c *fiber.Ctx) error {
	var req struct {
		Email string `json:"email"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	if err := h.svc.RequestMagicLink(c.UserContext(), req.Email); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"ok": true})
}

func (h handlers) verifyMagicLink(c *fiber.Ctx) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	in, err := h.svc.VerifyMagicLink(c.UserContext(), req.Token)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		Token     string       `json:"token"`
		ExpiresAt apitime.Time `json:"expiresAt"`
		User      userJSON     `json:"user"`
	}{in.Token, apitime.Time(in.Session.ExpiresAt), userJSON{in.User.ID, in.User.Email, in.User.Name}})
}

func (h handlers) logout(c *fiber.Ctx) error {
	if err := h.svc.Logout(c.UserContext(), callerid.From(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
