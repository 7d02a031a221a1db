// Package httpapi is the apps service's HTTP face behind the gateway: /api/apps and the
// env and domains routes under it, plus /healthz. Every /api route requires a caller the
// gateway signed and passes the access gate (contract/access's table) first: an app route
// answers 404 unless the caller is a member of the app's team, and 403 when their role or
// token's scope is not enough.
package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/apps/internal/usecase"
)

// Deps is what the handlers use.
type Deps struct {
	Apps    *usecase.Apps
	Env     *usecase.Env
	Domains *usecase.Domains
	// Gate stands before every /api route: it locates the team, refuses what the caller may
	// not do and gives each change its audit entry.
	Gate       *accessgate.Gate
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
	// The gate is a route-level handler, not group middleware: only there is c.Route() the
	// matched route, whose template the access table is keyed by.
	gate := d.Gate.Check
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	api.Get("/apps", gate, h.listApps)
	api.Post("/apps", gate, h.createApp)
	api.Get("/apps/:slug", gate, h.getApp)
	api.Delete("/apps/:slug", gate, h.deleteApp)

	api.Get("/apps/:slug/env", gate, h.listEnv)
	api.Put("/apps/:slug/env", gate, h.putEnv)
	api.Patch("/apps/:slug/env", gate, h.changeEnv)
	api.Delete("/apps/:slug/env/:key", gate, h.deleteEnv)

	api.Get("/apps/:slug/domains", gate, h.listDomains)
	api.Post("/apps/:slug/domains", gate, h.addDomain)
	api.Delete("/apps/:slug/domains/:hostname", gate, h.removeDomain)
	return app
}

type handlers struct{ Deps }

// owner is the id of the team the gate located for the request: an app route's app belongs
// to it (apps.account_id holds the owning team's id; a personal team's id is its account's).
func owner(c *fiber.Ctx) string { return accessgate.Team(c) }

// teamSlug is the slug of the caller's team teamID, as App.team shows it; "" when the
// caller's memberships do not name it (a caller signed without teams).
func teamSlug(c *fiber.Ctx, teamID string) string {
	m, _ := callerid.From(c).Principal().TeamByID(teamID)
	return m.Slug
}
