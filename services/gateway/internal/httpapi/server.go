// Package httpapi is the gateway's HTTP front: one handler that traces and logs each request,
// applies CORS, then authenticates, limits and forwards it.
package httpapi

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"tori.dev/pkg/connlimit"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httpserver"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/logstreams"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/readiness"
	"tori.dev/services/gateway/internal/routes"
)

// MaxBody caps a request body. The services enforce each plan's upload size (1 GiB at most);
// this only keeps a runaway client from streaming forever.
const MaxBody = 2 << 30

// Timeouts of client connections. Headers must arrive within HeaderTimeout and any other body
// within BodyTimeout after them, so a client trickling bytes cannot hold a socket; only a
// deploy upload gets UploadTimeout, since a large upload on a slow link is legitimate. Write
// bounds sending an answer after the handler returns, Idle a kept-alive connection's wait.
type Timeouts struct {
	Header, Body, Upload, Write, Idle time.Duration
	// Stream replaces Write for a log stream, which writes for as long as it is open: it
	// must exceed the logs service's LOGS_STREAM_LIFETIME, which ends every stream first.
	Stream time.Duration
}

// DefaultTimeouts are the gateway's: the JSON routes' bodies are a few kilobytes.
var DefaultTimeouts = Timeouts{
	Header: 10 * time.Second,
	Body:   10 * time.Second,
	Upload: time.Hour,
	Write:  time.Minute,
	Idle:   2 * time.Minute,
	Stream: 2 * time.Hour,
}

// Listen wraps the gateway's listener so that one peer address holds at most maxPerIP
// connections at once (GATEWAY_MAX_CONNS_PER_IP); the rest are answered 429 and closed.
func Listen(ln net.Listener, maxPerIP int) net.Listener { return connlimit.PerIP(ln, maxPerIP) }

// Authenticator resolves an Authorization header to a caller.
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (auth.Principal, error)
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
	// Tokens is the token cache a logout or revocation passing through evicts from; nil
	// leaves revocations to identity's event.
	Tokens Tokens
	// Accounts is the copy of identity's GET /api/account answers; nil forwards every read.
	Accounts *AccountViews
	// Idempotency keeps Idempotency-Key records; nil turns the header off.
	Idempotency idempotency.Store
	// Streams counts and ends open log streams; nil forwards them like any answer.
	Streams *logstreams.Registry
	// Timeouts of client connections; a zero field takes DefaultTimeouts'.
	Timeouts Timeouts
}

// Server is the gateway's request handling.
type Server struct {
	Deps
	tracer trace.Tracer
}

// New builds the Fiber app.
func New(d Deps) *fiber.App {
	s := &Server{Deps: d, tracer: otel.Tracer("tori.dev/services/gateway")}
	t := d.Timeouts.withDefaults()
	app := httpserver.New(httpserver.Options{
		Name: "gateway", Log: d.Log, ErrorHandler: errorHandler(d.Log),
		// Bodies are streamed, never buffered: fasthttp hands the handler a reader after the
		// first few kilobytes, and must not pre-parse multipart uploads into memory or temp
		// files on the way.
		Streaming: true,
		BodyLimit: MaxBody,
		// Headers within t.Header; a body's own deadline is picked once they are in.
		ReadTimeout: t.Header, WriteTimeout: t.Write, IdleTimeout: t.Idle,
		RequestConfig: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			switch {
			case isUpload(h):
				return fasthttp.RequestConfig{ReadTimeout: t.Upload}
			case proxy.HasBody(h):
				return fasthttp.RequestConfig{ReadTimeout: t.Body}
			case isLogStream(h):
				// A log stream writes for its lifetime: it alone is exempt from WriteTimeout.
				return fasthttp.RequestConfig{WriteTimeout: t.Stream}
			}
			return fasthttp.RequestConfig{}
		},
		// Content types are the services' to set; the gateway sets its own explicitly.
		RawContentType: true,
		// s.handle traces, logs and counts each request itself.
		Observe: httpserver.Nothing,
	})
	app.Use(s.handle)
	return app
}

func (t Timeouts) withDefaults() Timeouts {
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	return Timeouts{
		Header: pick(t.Header, DefaultTimeouts.Header),
		Body:   pick(t.Body, DefaultTimeouts.Body),
		Upload: pick(t.Upload, DefaultTimeouts.Upload),
		Write:  pick(t.Write, DefaultTimeouts.Write),
		Idle:   pick(t.Idle, DefaultTimeouts.Idle),
		Stream: pick(t.Stream, DefaultTimeouts.Stream),
	}
}

// isUpload reports whether a request is a deploy's or a preview's upload (a multipart POST
// to a route marked Upload), the one request whose body may legitimately take long.
func isUpload(h *fasthttp.RequestHeader) bool {
	if string(h.Method()) != fiber.MethodPost ||
		!strings.HasPrefix(strings.ToLower(string(h.ContentType())), fiber.MIMEMultipartForm) {
		return false
	}
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	m := routes.Find(fiber.MethodPost, path)
	return m.Route != nil && m.Route.Upload
}

// isLogStream reports whether a request opens a log stream.
func isLogStream(h *fasthttp.RequestHeader) bool {
	if string(h.Method()) != fiber.MethodGet {
		return false
	}
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	m := routes.Find(fiber.MethodGet, path)
	return m.Route != nil && m.Route.Template == routes.LogStream
}
