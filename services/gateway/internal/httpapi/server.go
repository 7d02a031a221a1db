// Package httpapi is the gateway's HTTP front: one handler that traces and logs each request,
// applies CORS, then authenticates, limits and forwards it.
package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/readiness"
)

// MaxBody caps a request body. The services enforce each plan's upload size (1 GiB at most);
// this only keeps a runaway client from streaming forever.
const MaxBody = 2 << 30

// Timeouts of client connections. Headers must arrive promptly; a request with a body gets
// uploadTimeout to finish sending it, since a large upload on a slow link is legitimate.
const (
	headerTimeout = 30 * time.Second
	uploadTimeout = time.Hour
	idleTimeout   = 2 * time.Minute
)

// Authenticator resolves an Authorization header to a caller.
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (callerid.Caller, error)
}

// Readiness reports whether the services behind the gateway are ready.
type Readiness interface {
	Check(ctx context.Context) readiness.Report
}

// Deps is everything the HTTP front uses.
type Deps struct {
	Log       *slog.Logger
	Identity  health.Identity
	OpenAPI   []byte            // served as it is
	Upstreams map[string]string // owner -> scheme://host[:port]
	Auth      Authenticator
	Limits    *ratelimit.Policy
	ClientIP  *clientip.Resolver
	CORS      *cors.Policy
	Proxy     *proxy.Proxy
	Ready     Readiness
	// Idempotency keeps Idempotency-Key records; nil turns the header off.
	Idempotency idempotency.Store
}

// Server is the gateway's request handling.
type Server struct {
	Deps
	tracer trace.Tracer
}

// New builds the Fiber app.
func New(d Deps) *fiber.App {
	s := &Server{Deps: d, tracer: otel.Tracer("tori.dev/services/gateway")}
	app := fiber.New(fiber.Config{
		// Bodies are streamed, never buffered: fasthttp hands the handler a reader after the
		// first few kilobytes, and must not pre-parse multipart uploads into memory or temp
		// files on the way.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    MaxBody,
		ReadTimeout:                  headerTimeout,
		IdleTimeout:                  idleTimeout,
		// Content types are the services' to set; the gateway sets its own explicitly.
		DisableDefaultContentType: true,
		DisableStartupMessage:     true,
		ErrorHandler:              errorHandler(d.Log),
	})
	app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if proxy.HasBody(h) {
			return fasthttp.RequestConfig{ReadTimeout: uploadTimeout}
		}
		return fasthttp.RequestConfig{}
	}
	app.Use(s.handle)
	return app
}
