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
	"tori.dev/pkg/pgstore"
	"tori.dev/services/databases/internal/usecase"
)

// Deps is what the routes need.
type Deps struct {
	Databases  *usecase.Databases
	SigningKey []byte // the gateway's callerid key
	// DB begins the transaction of an audit entry with no change to ride with (a refusal).
	DB       pgstore.Beginner
	Identity health.Identity
	Log      *slog.Logger
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	app := httpserver.New(httpserver.Options{Name: "databases", Log: d.Log, Health: &d.Identity})
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	h := &databaseHandler{dbs: d.Databases}
	// Every route goes through the gate first (gate_test.go holds each one to it).
	g := newGuard(d.Databases, d.DB, d.Log).check
	api.Post("/apps/:slug/database", g, h.create)
	api.Get("/apps/:slug/database", g, h.get)
	api.Delete("/apps/:slug/database", g, h.delete)
	api.Post("/apps/:slug/database/credentials/rotate", g, h.rotate)
	api.Get("/apps/:slug/database/dumps", g, h.listDumps)
	api.Post("/apps/:slug/database/dumps", g, h.takeDump)
	api.Get("/apps/:slug/database/dumps/:id/download", g, h.download)
	api.Get("/apps/:slug/database/restores", g, h.listRestores)
	api.Post("/apps/:slug/database/restores", g, h.createRestore)
	api.Delete("/apps/:slug/database/restores/:id", g, h.deleteRestore)
	return app
}
