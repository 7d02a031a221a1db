package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/services/gateway/internal/routes"
)

// local answers the routes the gateway owns.
func (s *Server) local(c *fiber.Ctx, r *routes.Route) error {
	switch r.Template {
	case "/healthz":
		return s.Identity.Handler(c)
	case "/readyz":
		return s.ready(c)
	case "/api/openapi.json":
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(s.OpenAPI)
	}
	return errNoRoute
}

// ready answers /readyz in the shape every service uses: 200 once each service the gateway
// waits for is ready and its own database and broker answer, 503 naming what is not.
func (s *Server) ready(c *fiber.Ctx) error {
	r := s.Ready.Check(c.UserContext())
	// The gateway's own database and broker (health.Identity.Check) count as much as its upstreams.
	if failing := s.Identity.Failing(c.UserContext()); len(failing) > 0 {
		r.Ready, r.Waiting = false, append(failing, r.Waiting...) // failing is the caller's own copy
	}
	if !r.Ready {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"error": "not_ready", "code": "not_ready", "waiting": r.Waiting})
	}
	return c.JSON(fiber.Map{"ready": true})
}
