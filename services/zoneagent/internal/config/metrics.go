package config

import (
	"errors"
	"time"
)

// EdgeMetrics are the edge's settings for the customer's request metrics (README "Metrics").
type EdgeMetrics struct {
	// EdgeMetrics turns the edge's per-app request counting on or off (off is for
	// bench-edge, which measures what counting costs).
	EdgeMetrics string `env:"EDGE_METRICS, default=on"`
	// MetricsFlushInterval is how often the edge writes the current minute's counts so far
	// to the zone's outbox (also at each minute's turn and at shutdown); at most a minute.
	MetricsFlushInterval time.Duration `env:"ZONE_METRICS_FLUSH_INTERVAL, default=10s"`
}

// Counting reports whether the edge counts requests.
func (m EdgeMetrics) Counting() bool { return m.EdgeMetrics == "on" }

func (m *EdgeMetrics) validate() error {
	var errs []error
	if m.EdgeMetrics != "on" && m.EdgeMetrics != "off" {
		errs = append(errs, errors.New("EDGE_METRICS must be on or off"))
	}
	if m.MetricsFlushInterval < time.Second || m.MetricsFlushInterval > time.Minute {
		errs = append(errs, errors.New("ZONE_METRICS_FLUSH_INTERVAL must be between 1s and 1m"))
	}
	return errors.Join(errs...)
}

// RuntimeMetrics are the runtime's settings for the customer's instance metrics.
type RuntimeMetrics struct {
	// MetricsSampleInterval is how often each running instance's cgroup is sampled (CPU
	// over the interval, memory at the sample) and the samples published.
	MetricsSampleInterval time.Duration `env:"ZONE_METRICS_SAMPLE_INTERVAL, default=60s"`
}

func (m *RuntimeMetrics) validate() error {
	if m.MetricsSampleInterval < time.Second || m.MetricsSampleInterval > time.Hour {
		return errors.New("ZONE_METRICS_SAMPLE_INTERVAL must be between 1s and 1h")
	}
	return nil
}
