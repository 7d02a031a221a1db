package supervisor

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The supervisor's families on the zone agent's /metrics (pkg/metrics); the sandbox's own
// are in internal/sandbox/metrics.go. No app id is a label.
var (
	appWakes = promauto.NewCounter(prometheus.CounterOpts{
		Name: "tori_zone_wakes_total",
		Help: "Napping services started again by a request.",
	})
	oomKills = promauto.NewCounter(prometheus.CounterOpts{
		Name: "tori_zone_oom_kills_total",
		Help: "Processes the kernel killed for going over their app's memory limit.",
	})
)
