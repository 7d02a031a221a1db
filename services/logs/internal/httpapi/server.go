// Package httpapi is the logs service's HTTP face: GET /api/apps/{slug}/logs (and its
// stream) behind the gateway's signature and the access gate, and /healthz.
package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/usecase"
)

// Deps is what the routes need.
type Deps struct {
	Reader     *usecase.Reader
	SigningKey []byte // the gateway's callerid key
	// Apps finds an app's team for the access gate (usecase.AppFinder).
	Apps AppTeams
	// DB is the service's pool: the gate writes the audit entry of a refusal through it.
	DB       pgstore.Beginner
	Identity health.Identity
	Log      *slog.Logger
	// Streamer serves the live stream; nil leaves the route out.
	Streamer *usecase.Streamer
	// Stream is the live stream's timings; zero takes DefaultStreamLimits.
	Stream StreamLimits
	// Drains serves the drain routes; nil leaves them out.
	Drains *drains.Service
	// Stopping ends when the service stops: every open stream then ends with its final
	// event, so the HTTP shutdown is not held up by them.
	Stopping context.Context

	// Metrics serves GET /api/apps/{slug}/metrics; nil leaves the route out.
	Metrics *usecase.MetricsReader
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	limits := d.Stream.withDefaults()
	app := httpserver.New(httpserver.Options{Name: "logs", Log: d.Log, Health: &d.Identity, Translate: toHTTP,
		// A stream writes for up to its lifetime: it alone is exempt from WriteTimeout.
		RequestConfig: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			if isStreamRequest(h) {
				return fasthttp.RequestConfig{WriteTimeout: limits.Lifetime + streamWriteSlack}
			}
			return fasthttp.RequestConfig{}
		},
	})
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	// The gate goes before every handler (gate_test.go holds each route to it); on a stream
	// it decides once, before the first byte, and holds nothing while the stream runs.
	gate := newGate(d.Apps, d.DB, log)
	api := app.Group("/api", callerid.Middleware(d.SigningKey, true, httperror.Unauthorized))
	h := &logsHandler{reader: d.Reader}
	api.Get("/apps/:slug/logs", gate.Check, h.get)
	if d.Metrics != nil {
		api.Get("/apps/:slug/metrics", gate.Check, (&metricsHandler{reader: d.Metrics}).get)
	}
	if d.Streamer != nil {
		stopping := d.Stopping
		if stopping == nil {
			stopping = context.Background()
		}
		s := &streamHandler{streamer: d.Streamer, limits: limits, stopping: stopping, log: d.Log}
		api.Get("/apps/:slug/logs/stream", gate.Check, s.get)
	}
	if d.Drains != nil {
		dh := &drainsHandler{svc: d.Drains}
		api.Post("/apps/:slug/drains", gate.Check, dh.create)
		api.Get("/apps/:slug/drains", gate.Check, dh.list)
		api.Get("/apps/:slug/drains/:id", gate.Check, dh.get)
		api.Delete("/apps/:slug/drains/:id", gate.Check, dh.remove)
		api.Post("/apps/:slug/drains/:id/test", gate.Check, dh.test)
	}
	return app
}

func (l StreamLimits) withDefaults() StreamLimits {
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	d := DefaultStreamLimits
	return StreamLimits{
		Poll: pick(l.Poll, d.Poll), Heartbeat: pick(l.Heartbeat, d.Heartbeat),
		Idle: pick(l.Idle, d.Idle), Lifetime: pick(l.Lifetime, d.Lifetime),
		LivenessEvery: pick(l.LivenessEvery, d.LivenessEvery), Retry: pick(l.Retry, d.Retry),
	}
}
