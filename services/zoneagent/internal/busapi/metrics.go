package busapi

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// databaseDuration times the zone's managed-database commands on /metrics (pkg/metrics):
// provisioning (create), dumps and restores, each with how it ended.
var databaseDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "tori_zone_database_operation_duration_seconds",
	Help:    "Time a managed-database command took on the zone, by operation (provision, dump, restore) and outcome (ok, error).",
	Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800},
}, []string{"operation", "outcome"})

// timed runs one database command and records how long it took.
func timed(operation string, run func() error) error {
	start := time.Now()
	err := run()
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	databaseDuration.WithLabelValues(operation, outcome).Observe(time.Since(start).Seconds())
	return err
}
