// Package httpapi is the apps service's HTTP face behind the gateway: /api/apps and the
// env and domains routes under it, plus /healthz. Every /api route requires a caller the
// gateway signed, and every app route answers 404 unless the caller's account owns the app.
package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/apps/internal/usecase"
)

// Deps is what the handlers use.
type Deps struct {
	Apps       *usecase.Apps
	Env        *usecase.Env
	Domains    *usecase.Domains
	AppsDomain string
	SigningKey []byte
	Health     health.Identity
	Log        *slog.Logger
}

// BodyLimit bounds request bodies: an env write is the largest (a 32 KiB value, escaped;
// a change of several variables at once fits as many values as this allows).
const BodyLimit = 256 << 10

// New builds the Fiber app.
func New(d Deps) *fiber.App {
	app := httpserver.New(httpserver.Options{
		Name: "apps", Log: d.Log, BodyLimit: BodyLimit, Translate: toHTTP, Health: &d.Health,
		// Params and bodies outlive the handler in errors and logs; copying them is safer
		// than fasthttp's reused buffers.
		Immutable: true,
	})

	h := handlers{d}
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	api.Get("/apps", h.listApps)
	api.Post("/apps", h.createApp)
	api.Get("/apps/:slug", h.getApp)
	api.Delete("/apps/:slug", h.deleteApp)

	api.Get("/apps/:slug/env", h.listEnv)
	api.Put("/apps/:slug/env", h.putEnv)
	api.Patch("/apps/:slug/env", h.changeEnv)
	api.Delete("/apps/:slug/env/:key", h.deleteEnv)

	api.Get("/apps/:slug/domains", h.listDomains)
	api.Post("/apps/:slug/domains", h.addDomain)
	api.Delete("/apps/:slug/domains/:hostname", h.removeDomain)
	return app
}

type handlers struct{ Deps }

func account(c *fiber.Ctx) string { return callerid.From(c).AccountID }
