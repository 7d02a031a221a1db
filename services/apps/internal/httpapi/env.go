package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/services/apps/internal/env"
)

func (h handlers) putEnv(c *fiber.Ctx) error {
	// The app first: an unknown, foreign or deleted app is 404 whatever the body says.
	a, err := h.Apps.Get(c.UserContext(), account(c), c.Params("slug"))
	if err != nil {
		return err
	}
	body, err := object(c.Body(), false)
	if err != nil {
		return err
	}
	key, ok := optString(body, "key")
	if !ok || key == nil {
		return env.ErrInvalidKey
	}
	value, ok := optString(body, "value")
	if !ok || value == nil {
		return env.ErrInvalidValue
	}
	created, err := h.Env.PutFor(c.UserContext(), a, *key, *value)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(envJSON{Key: *key, Value: env.Mask(*value)})
}

func (h handlers) listEnv(c *fiber.Ctx) error {
	vars, err := h.Env.List(c.UserContext(), account(c), c.Params("slug"))
	if err != nil {
		return err
	}
	out := make([]envJSON, 0, len(vars))
	for _, v := range vars {
		out = append(out, toEnvJSON(v))
	}
	return c.JSON(out)
}

func (h handlers) deleteEnv(c *fiber.Ctx) error {
	if err := h.Env.Delete(c.UserContext(), account(c), c.Params("slug"), c.Params("key")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
