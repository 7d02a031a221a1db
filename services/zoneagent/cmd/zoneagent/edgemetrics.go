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

// edgeFamilies is the prefix of the edge's own metric families (certificates, the site
// cache, dropped cookies): the agent's /metrics shows them as the edge process counts them,
// so the zone's figures stay where operators (and dashboards) read them.
const edgeFamilies = "tori_edge_"

// edgeMetricsAddr is the running edge's health address ("" when none): one agent per process.
var (
	edgeMetricsAddr     atomic.Pointer[string]
	registerEdgeMetrics sync.Once
)

// showEdgeMetrics makes the agent's /metrics carry the edge's families from addr.
func showEdgeMetrics(addr string) (stop func()) {
	registerEdgeMetrics.Do(func() { prometheus.MustRegister(edgeMetrics{}) })
	edgeMetricsAddr.Store(&addr)
	return func() { edgeMetricsAddr.CompareAndSwap(&addr, nil) }
}

// edgeMetrics is an unchecked collector: it reads the edge's /metrics at each scrape.
type edgeMetrics struct{}

func (edgeMetrics) Describe(chan<- *prometheus.Desc) {}

func (edgeMetrics) Collect(ch chan<- prometheus.Metric) {
	addr := edgeMetricsAddr.Load()
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
		return // the edge's own /readyz check says why
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return
	}
	for name, f := range families {
		if strings.HasPrefix(name, edgeFamilies) {
			constMetrics(name, f, ch)
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
