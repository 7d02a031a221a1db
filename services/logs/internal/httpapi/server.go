// Package httpapi is the logs service's HTTP face: GET /api/apps/{slug}/logs behind the
// gateway's signature, and /healthz.
package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/logs/internal/app"
)

// Deps is what the routes need.
type Deps struct {
	Reader     *app.Reader
	SigningKey []byte // the gateway's callerid key
	Identity   health.Identity
	Log        *slog.Logger
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	app := httpserver.New(httpserver.Options{Name: "logs", Log: d.Log, Health: &d.Identity})
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	h := &logsHandler{reader: d.Reader}
	api.Get("/apps/:slug/logs", h.get)
	return app
}
