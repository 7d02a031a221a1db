// Package httpserver builds the Fiber app every Tori service serves: the timeouts of
// docs/configuration.md ("Limits that are not settings"), a body limit, the contract's error body, a recovered
// panic answered as a 500, and a span, an access line and the request metrics per request.
// A service adds its routes to what New returns; what differs between services (a larger
// body, streamed uploads, the gateway's own tracing) is an Options field.
package httpserver

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/metrics"
	"tori.dev/pkg/telemetry"
)

// The timeouts a zero Options field takes. The whole request, body included, must arrive
// within ReadTimeout, so a client trickling a small JSON body cannot hold a socket.
const (
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultIdleTimeout  = 2 * time.Minute
)

// Observe says what New puts in front of every route.
type Observe int

const (
	// Spans continues the caller's trace in a server span, writes an access line and counts
	// the request for /metrics (telemetry.ServerSpans), and recovers a panic.
	Spans Observe = iota
	// MetricsOnly counts each request for /metrics and recovers a panic: for a server only
	// operators and probes call, whose requests would only add noise to traces and logs.
	MetricsOnly
	// Nothing mounts no middleware: for a server that traces, logs and counts in its own
	// handler (the gateway's public front).
	Nothing
)

// Options are what one service's server differs in; the zero value of each field is the
// house default.
type Options struct {
	// Name is the service's name: the app's name and, under tori.dev/services/, its tracer's.
	Name string
	// Log takes the access lines and the errors the error handler logs; nil is slog.Default.
	Log *slog.Logger
	// BodyLimit bounds a request body in bytes (larger is 413); zero is Fiber's 4 MiB.
	BodyLimit int
	// ReadTimeout, WriteTimeout and IdleTimeout: zero takes the Default ones above.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// RequestConfig, when set, picks a request's own timeouts once its headers are in (a
	// deploy upload on a slow line reads longer, a log stream writes longer); zero fields
	// keep the server's.
	RequestConfig func(h *fasthttp.RequestHeader) fasthttp.RequestConfig
	// Streaming hands handlers a body reader instead of the whole body, and leaves multipart
	// bodies unparsed, so an upload is never held whole in memory.
	Streaming bool
	// Immutable copies params and bodies out of fasthttp's reused buffers, for handlers that
	// keep them past the request (in errors and logs).
	Immutable bool
	// RawContentType leaves a response without a Content-Type unless a handler sets one.
	RawContentType bool
	// ErrorHandler writes a handler's error; nil is httperror.Handler, the contract's body.
	ErrorHandler fiber.ErrorHandler
	// Translate, with no ErrorHandler, turns a use case's error into an *httperror.Error
	// before httperror.Handler writes it: the service's one place for that mapping.
	Translate func(error) error
	// Observe is the middleware in front of the routes (Spans when zero).
	Observe Observe
	// Health, when set, is served at /healthz and /readyz, with the metrics at /metrics
	// (operators only: the gateway routes no /metrics).
	Health *health.Identity
	// Ready replaces Health's /readyz answer (the zone adds its sandbox's state).
	Ready fiber.Handler
}

// New builds the Fiber app with opts; the caller adds its routes.
func New(opts Options) *fiber.App {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	errorHandler := opts.ErrorHandler
	if errorHandler == nil {
		errorHandler = httperror.Handler(log)
		if translate := opts.Translate; translate != nil {
			write := errorHandler
			errorHandler = func(c *fiber.Ctx, err error) error { return write(c, translate(err)) }
		}
	}
	app := fiber.New(fiber.Config{
		AppName:                      opts.Name,
		DisableStartupMessage:        true,
		BodyLimit:                    opts.BodyLimit,
		ReadTimeout:                  or(opts.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:                 or(opts.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:                  or(opts.IdleTimeout, DefaultIdleTimeout),
		StreamRequestBody:            opts.Streaming,
		DisablePreParseMultipartForm: opts.Streaming,
		Immutable:                    opts.Immutable,
		DisableDefaultContentType:    opts.RawContentType,
		ErrorHandler:                 errorHandler,
	})
	if pick := opts.RequestConfig; pick != nil {
		app.Server().HeaderReceived = pick
	}
	switch opts.Observe {
	case Spans:
		app.Use(telemetry.ServerSpans("tori.dev/services/"+opts.Name, log), httperror.Recover(log))
	case MetricsOnly:
		app.Use(metrics.Fiber(), httperror.Recover(log))
	}
	if opts.Health != nil {
		ready := opts.Ready
		if ready == nil {
			ready = opts.Health.ReadyHandler
		}
		app.Get("/healthz", opts.Health.Handler)
		app.Get("/readyz", ready)
		app.Get("/metrics", metrics.Handler())
	}
	return app
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
