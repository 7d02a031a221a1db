package metrics

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Unmatched is the route label of a request no route took (a 404 from the router), so a
// scan of made-up paths adds one series, not one per path.
const Unmatched = "unmatched"

var (
	httpRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_http_requests_total",
		Help: "HTTP requests answered, by method, route template and status code.",
	}, []string{"method", "route", "code"})
	httpErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_http_request_errors_total",
		Help: "HTTP requests answered with a 5xx status, by method and route template.",
	}, []string{"method", "route"})
	httpDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tori_http_request_duration_seconds",
		Help:    "Time from a request's arrival to its answer, by method and route template.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"method", "route"})
)

// ObserveRequest counts one answered request. route is a template ("/api/apps/:slug"),
// never the request's own path.
func ObserveRequest(method, route string, status int, took time.Duration) {
	method = methodLabel(method)
	httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	if status >= 500 {
		httpErrors.WithLabelValues(method, route).Inc()
	}
	httpDuration.WithLabelValues(method, route).Observe(took.Seconds())
}

// methodLabel is the label for a request's method: one of the standard methods as a constant,
// "other" for the rest. The method a handler sees may be backed by the connection's buffer,
// which the next request overwrites; the registry keeps label values, so each must be a
// string of its own, and a client inventing methods must not add series.
func methodLabel(m string) string {
	switch m {
	case fiber.MethodGet:
		return fiber.MethodGet
	case fiber.MethodHead:
		return fiber.MethodHead
	case fiber.MethodPost:
		return fiber.MethodPost
	case fiber.MethodPut:
		return fiber.MethodPut
	case fiber.MethodPatch:
		return fiber.MethodPatch
	case fiber.MethodDelete:
		return fiber.MethodDelete
	case fiber.MethodOptions:
		return fiber.MethodOptions
	}
	return "other"
}

// Route is the template of the route that answered c, once the handlers have run; Unmatched
// when none did (only the middleware mounted at "/" ran).
func Route(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || (r.Path == "/" && c.Path() != "/") || r.Path == "" {
		return Unmatched
	}
	return r.Path
}

// Fiber is middleware that observes every request of an app with ObserveRequest. Put it
// first, so it times the whole request and sees the status the error handler wrote.
func Fiber() fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		ObserveRequest(c.Method(), Route(c), c.Response().StatusCode(), time.Since(start))
		return nil
	}
}
