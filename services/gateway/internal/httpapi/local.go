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
	case "/api/openapi.json":
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(s.OpenAPI)
	}
	return errNoRoute
}
