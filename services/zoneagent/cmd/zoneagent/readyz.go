package main

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/health"
)

// readyz is /readyz with the sandbox's state added to a ready answer: "ok", or
// "unavailable: <why>" (the zone is still ready: it serves static sites and refuses only
// customer code).
func readyz(id health.Identity, unavailable string) fiber.Handler {
	sandbox := "ok"
	if unavailable != "" {
		sandbox = "unavailable: " + unavailable
	}
	return func(c *fiber.Ctx) error {
		if err := id.ReadyHandler(c); err != nil || c.Response().StatusCode() != fiber.StatusOK {
			return err
		}
		body := map[string]any{}
		if err := json.Unmarshal(c.Response().Body(), &body); err != nil {
			return err
		}
		body["sandbox"] = sandbox
		return c.JSON(body)
	}
}
