// Package httpapi is the identity service's HTTP face: the routes decisions.md fixes under
// /api/auth, /api/tokens, /api/account and /api/teams, and the gateway's /internal/introspect. Every
// /api and /internal route demands the gateway's signature (pkg/callerid).
package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/identity/internal/usecase"
)

// bodyLimit is far above any body these routes read; larger ones are 413.
const bodyLimit = 64 << 10

// Config is what the HTTP layer is built from.
type Config struct {
	Service    *usecase.Service
	SigningKey []byte
	Log        *slog.Logger
	Health     health.Identity
	// Gate enforces contract/access's table on every authenticated route and records the
	// audit entries of team routes (accessgate.New with store.WriteAuditEntry).
	Gate *accessgate.Gate
}

type handlers struct {
	svc *usecase.Service
}

// New builds the Fiber app with every route.
func New(cfg Config) *fiber.App {
	a := httpserver.New(httpserver.Options{
		Name: "identity", Log: cfg.Log, BodyLimit: bodyLimit, ErrorHandler: errorHandler(cfg.Log, cfg.Gate), Health: &cfg.Health,
	})
	h := handlers{svc: cfg.Service}

	// Signed by the gateway, with or without a caller: the routes decisions.md calls public.
	public := callerid.Middleware(cfg.SigningKey, false, httperror.Unauthorized)
	// Signed and authenticated.
	private := callerid.Middleware(cfg.SigningKey, true, httperror.Unauthorized)
	// The table's check, a route-level handler before each authenticated one (it reads the
	// matched route).
	gate := cfg.Gate.Check

	a.Post("/api/auth/magic-link", public, h.requestMagicLink)
	a.Post("/api/auth/magic-link/verify", public, h.verifyMagicLink)
	a.Post("/api/auth/logout", private, gate, h.logout)

	a.Post("/api/auth/cli/device", public, h.startDevice)
	a.Post("/api/auth/cli/approve", private, gate, h.approveDevice)
	a.Post("/api/auth/cli/deny", private, gate, h.denyDevice)
	a.Post("/api/auth/cli/authorize", private, gate, h.authorize)
	a.Post("/api/auth/cli/token", public, h.token)

	a.Get("/api/tokens", private, gate, h.listTokens)
	a.Post("/api/tokens", private, gate, h.createToken)
	a.Delete("/api/tokens/:id", private, gate, h.revokeToken)

	a.Get("/api/teams/:team/tokens", private, gate, h.teamTokens)
	a.Delete("/api/teams/:team/tokens/:id", private, gate, h.revokeTeamToken)
	a.Get("/api/teams/:team/audit", private, gate, h.auditLog)

	a.Get("/api/account", private, gate, h.getAccount)
	a.Patch("/api/account", private, gate, h.patchAccount)

	teamRoutes(a, private, cfg.Gate, h)

	a.Post("/internal/introspect", public, h.introspect)
	return a
}
