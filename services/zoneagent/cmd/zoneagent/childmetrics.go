package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// childMetrics are the families a child process counts that the agent's /metrics shows as
// the child counts them, so the zone's figures stay where operators (and dashboards) read
// them: the edge's (certificates, the site cache, dropped cookies) and the database host's
// (provisioning, dumps, restores). Only families the agent itself never counts: a family both
// counted would be collected twice.
type childMetrics struct {
	prefixes []string
	addr     atomic.Pointer[string] // the running child's health address; nil: none
	register sync.Once
}

var (
	edgeMetrics     = &childMetrics{prefixes: []string{"tori_edge_"}}
	databaseMetrics = &childMetrics{prefixes: []string{"tori_zone_database_", "tori_zone_dump_"}}
)

// show makes the agent's /metrics carry the child's families from addr, until stop.
func (c *childMetrics) show(addr string) (stop func()) {
	c.register.Do(func() { prometheus.MustRegister(childCollector{c}) })
	c.addr.Store(&addr)
	return func() { c.addr.CompareAndSwap(&addr, nil) }
}

// childCollector is an unchecked collector: it reads the child's /metrics at each scrape.
type childCollector struct{ c *childMetrics }

func (childCollector) Describe(chan<- *prometheus.Desc) {}

func (cc childCollector) Collect(ch chan<- prometheus.Metric) {
	addr := cc.c.addr.Load()
	if addr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+*addr+"/metrics", nil)
	if err != nil {
		return
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the child's own /readyz check says why
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return
	}
	for name, f := range families {
		for _, prefix := range cc.c.prefixes {
			if strings.HasPrefix(name, prefix) {
				constMetrics(name, f, ch)
				break
			}
		}
	}
}

// constMetrics re-exposes one family's samples.
func constMetrics(name string, f *dto.MetricFamily, ch chan<- prometheus.Metric) {
	for _, m := range f.GetMetric() {
		var labels, values []string
		for _, l := range m.GetLabel() {
			labels, values = append(labels, l.GetName()), append(values, l.GetValue())
		}
		desc := prometheus.NewDesc(name, f.GetHelp(), labels, nil)
		var metric prometheus.Metric
		var err error
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			metric, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue(), values...)
		case dto.MetricType_GAUGE:
			metric, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), values...)
		case dto.MetricType_UNTYPED:
			metric, err = prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.GetUntyped().GetValue(), values...)
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			buckets := map[float64]uint64{}
			for _, b := range h.GetBucket() {
				buckets[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			metric, err = prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
		default:
			continue
		}
		if err == nil {
			ch <- metric
		}
	}
}
