// Package httpapi is the deploys service's HTTP face: the /api/apps/{slug}/deploys routes,
// reached only through the gateway, which signs who the caller is.
package httpapi

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/telemetry"
	"tori.dev/services/deploys/internal/app"
	"tori.dev/services/deploys/internal/deploy"
)

// Deploys is what the handlers need from the use cases; *app.Service is one.
type Deploys interface {
	CreateImage(ctx context.Context, accountID, slug string, in app.ImageInput) (*deploy.Deploy, bool, error)
	CreateUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string, isService bool) (*deploy.Deploy, error)
	List(ctx context.Context, accountID, slug string, limit int, before string) ([]*deploy.Deploy, error)
	Get(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	Cancel(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	Rollback(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	AppKind(ctx context.Context, accountID, slug string) (string, error)
}

// Deps are the handlers' collaborators.
type Deps struct {
	Deploys    Deploys
	SigningKey []byte
	Health     health.Identity
	Log        *slog.Logger
}

// inMemoryBody is the largest body fasthttp reads before calling the handler. Anything
// larger streams: the handler reads it from the connection as it arrives, so an upload is
// never held whole in memory.
const inMemoryBody = 64 << 10

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	handle := httperror.Handler(d.Log)
	srv := fiber.New(fiber.Config{
		AppName:                      "deploys",
		DisableStartupMessage:        true,
		BodyLimit:                    inMemoryBody,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Minute, // a large upload on a slow line
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  2 * time.Minute,
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			return handle(c, toHTTP(err))
		},
	})
	srv.Use(telemetry.ServerSpans("tori.dev/services/deploys", d.Log))
	srv.Get("/healthz", d.Health.Handler)
	srv.Get("/readyz", d.Health.ReadyHandler)

	h := handlers{deploys: d.Deploys}
	api := srv.Group("/api/apps/:slug/deploys", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	api.Post("/", h.create)
	api.Get("/", h.list)
	api.Get("/:id", h.get)
	api.Post("/:id/cancel", h.cancel)
	api.Post("/:id/rollback", h.rollback)
	return srv
}
