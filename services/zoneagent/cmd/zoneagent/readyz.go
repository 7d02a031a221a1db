package main

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/health"
	"tori.dev/services/zoneagent/internal/config"
)

// readyz is /readyz with the sandbox's state added to a ready answer: "ok", or
// "unavailable: <why>" (the zone is still ready: it serves static sites and refuses only
// customer code); and the tenants' shared settings (config.Posture): "appsDomain" and
// "certificates", each "ok" or what is wrong; and "edgePrivilege": "ok", or that the edge
// runs as the agent's own user (an agent that is not root). Neither makes the zone unready: a local zone
// runs with both, and an operator reads them here and in the start line.
func readyz(id health.Identity, unavailable string, posture config.Posture) fiber.Handler {
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
		body["appsDomain"] = posture.AppsDomain
		body["certificates"] = posture.Certificates
		body["edgePrivilege"] = posture.Edge
		return c.JSON(body)
	}
}
