// Package httpapi is the databases service's HTTP face: /api/apps/{slug}/database behind the
// gateway's signature, /healthz and /readyz.
package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/databases/internal/usecase"
)

// Deps is what the routes need.
type Deps struct {
	Databases  *usecase.Databases
	SigningKey []byte // the gateway's callerid key
	Identity   health.Identity
	Log        *slog.Logger
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	app := httpserver.New(httpserver.Options{Name: "databases", Log: d.Log, Health: &d.Identity})
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	h := &databaseHandler{dbs: d.Databases}
	api.Post("/apps/:slug/database", h.create)
	api.Get("/apps/:slug/database", h.get)
	api.Delete("/apps/:slug/database", h.delete)
	api.Post("/apps/:slug/database/credentials/rotate", h.rotate)
	api.Get("/apps/:slug/database/dumps", h.listDumps)
	api.Post("/apps/:slug/database/dumps", h.takeDump)
	api.Get("/apps/:slug/database/dumps/:id/download", h.download)
	api.Get("/apps/:slug/database/restores", h.listRestores)
	api.Post("/apps/:slug/database/restores", h.createRestore)
	api.Delete("/apps/:slug/database/restores/:id", h.deleteRestore)
	return app
}
