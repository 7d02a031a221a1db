package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"tori.dev/services/gateway/internal/ratelimit"
)

// rateLimitRefusals counts the gateway's 429s on /metrics (GATEWAY_METRICS_ADDR), by the
// refusal's code (rate_limited, or the token exchange's slow_down).
var rateLimitRefusals = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "tori_gateway_rate_limit_refusals_total",
	Help: "Requests the gateway refused for a rate limit, by refusal code.",
}, []string{"code"})

// Shown at zero from the start, so a rate over them exists before the first refusal.
func init() {
	for _, code := range []string{ratelimit.CodeRateLimited, ratelimit.CodeSlowDown} {
		rateLimitRefusals.WithLabelValues(code)
	}
}
