// Package httpapi is the logs service's HTTP face: GET /api/apps/{slug}/logs behind the
// gateway's signature, and /healthz.
package httpapi

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/metrics"
	"tori.dev/pkg/telemetry"
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
	app := fiber.New(fiber.Config{
		ErrorHandler:          httperror.Handler(d.Log),
		DisableStartupMessage: true,
		// The whole request, body included, must arrive within ReadTimeout, so a trickled
		// JSON body cannot hold a socket (docs/conventions.md, "Timeouts").
		ReadTimeout:  10 * time.Second,
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  2 * time.Minute,
	})
	app.Use(telemetry.ServerSpans("tori.dev/services/logs", d.Log), httperror.Recover(d.Log))
	app.Get("/healthz", d.Identity.Handler)
	app.Get("/readyz", d.Identity.ReadyHandler)
	app.Get("/metrics", metrics.Handler()) // operators only: the gateway routes no /metrics

	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	h := &logsHandler{reader: d.Reader}
	api.Get("/apps/:slug/logs", h.get)
	return app
}
