// Package httpapi is the deploys service's HTTP face: the /api/apps/{slug}/deploys routes,
// reached only through the gateway, which signs who the caller is.
package httpapi

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// Deploys is what the handlers need from the use cases; *usecase.Service is one. Each
// accountID is the owning team's id (a personal team's is its account's).
type Deploys interface {
	CreateImage(ctx context.Context, accountID, slug string, in usecase.ImageInput) (*deploy.Deploy, bool, error)
	CreateUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string, isService bool) (*deploy.Deploy, error)
	List(ctx context.Context, accountID, slug string, limit int, before string) ([]*deploy.Deploy, error)
	Get(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	Cancel(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	Rollback(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error)
	AppKind(ctx context.Context, accountID, slug string) (string, error)
	Formation(ctx context.Context, accountID, slug string) ([]deploy.FormationEntry, error)
	Scale(ctx context.Context, accountID, slug string, updates []deploy.ScaleUpdate) ([]deploy.FormationEntry, error)
	AppTeams
}

// Deps are the handlers' collaborators.
type Deps struct {
	Deploys Deploys
	// Crons serves /api/apps/{slug}/crons; nil leaves those routes out.
	Crons Crons
	// Previews serves /api/apps/{slug}/previews; nil leaves those routes out.
	Previews Previews
	// PreviewsDomain is PREVIEWS_DOMAIN: a preview's URL is https://<label>.<PreviewsDomain>.
	PreviewsDomain string
	SigningKey     []byte
	// DB is the service's pool: the gate writes the audit entry of a refusal through it.
	DB     pgstore.Beginner
	Health health.Identity
	Log    *slog.Logger
}

// inMemoryBody is the largest body fasthttp reads before calling the handler. Anything
// larger streams: the handler reads it from the connection as it arrives, so an upload is
// never held whole in memory.
const inMemoryBody = 64 << 10

// Read timeouts: a JSON body must arrive promptly, while a large upload on a slow line is
// legitimate and streams under uploadTimeout.
const (
	jsonTimeout   = 10 * time.Second
	uploadTimeout = 30 * time.Minute
)

// readTimeout picks a request's read timeout: only an upload (a multipart POST, the one
// request this service streams) gets uploadTimeout; a JSON body must arrive within
// jsonTimeout.
func readTimeout(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if string(h.Method()) == fiber.MethodPost &&
		strings.HasPrefix(strings.ToLower(string(h.ContentType())), fiber.MIMEMultipartForm) {
		return fasthttp.RequestConfig{ReadTimeout: uploadTimeout}
	}
	return fasthttp.RequestConfig{ReadTimeout: jsonTimeout}
}

// guard is what every authenticated group runs before its routes: a refusal closes the
// connection, the caller's signature is checked (bodies left to stream), and the caller's
// teams are handed to the gate's app lookup.
func guard(key []byte) []fiber.Handler {
	return []fiber.Handler{closeOnError, callerid.StreamingMiddleware(key, true, httperror.Unauthorized)}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	srv := httpserver.New(httpserver.Options{
		Name: "deploys", Log: d.Log, Health: &d.Health,
		BodyLimit: inMemoryBody, Streaming: true, ReadTimeout: jsonTimeout, RequestConfig: readTimeout,
		Translate: toHTTP,
	})

	h := handlers{deploys: d.Deploys, key: d.SigningKey}
	gate := newGate(d.Deploys, d.DB, logger(d.Log))
	// Bodies stream (an upload may be a gigabyte): the handlers read them through
	// callerid.Body, which checks them against their signature at their end. The gate goes
	// before every handler (gate_test.go holds each route to it); it reads no body.
	api := srv.Group("/api/apps/:slug/deploys", guard(d.SigningKey)...)
	api.Post("/", gate.Check, h.create)
	api.Get("/", gate.Check, h.list)
	api.Get("/:id", gate.Check, h.get)
	api.Post("/:id/cancel", gate.Check, h.cancel)
	api.Post("/:id/rollback", gate.Check, h.rollback)
	formation := srv.Group("/api/apps/:slug/formation", guard(d.SigningKey)...)
	formation.Get("/", gate.Check, h.formation)
	formation.Patch("/", gate.Check, h.scale)
	if d.Crons != nil {
		cronRoutes(srv, d.Crons, d.SigningKey, gate)
	}
	if d.Previews != nil {
		previewRoutes(srv, d.Previews, d.PreviewsDomain, d.SigningKey, gate)
	}
	return srv
}
