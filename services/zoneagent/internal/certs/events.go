package certs

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// ErrOrderLimit refuses an order past the zone's ACME order rate (ZONE_ACME_ORDERS_PER_HOUR):
// however many hostnames customers add, the zone stays within its CA's limits.
var ErrOrderLimit = errors.New("the zone's certificate order rate is exhausted; asked again at the next handshake or renewal check")

// Metrics of the zone's certificates, on the agent's /metrics.
var (
	ordersTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_edge_certificate_orders_total",
		Help: "Certificate orders by the edge: kind new or renewal; result obtained, failed, or limited (refused by the zone's order rate).",
	}, []string{"kind", "result"})
	expiryDesc = prometheus.NewDesc("tori_edge_certificate_soonest_expiry_days",
		"Days until the soonest-expiring certificate this edge obtained expires (absent before the first).", nil, nil)
	heldDesc = prometheus.NewDesc("tori_edge_certificates_obtained",
		"Certificates this edge has obtained or renewed and holds, one per hostname.", nil, nil)
	registerMetrics sync.Once
	held            = &expiries{notAfter: map[string]time.Time{}}
)

// expiries are the obtained certificates' ends, by hostname; a collector reads them.
type expiries struct {
	mu       sync.Mutex
	notAfter map[string]time.Time
}

func (e *expiries) Describe(ch chan<- *prometheus.Desc) { ch <- expiryDesc; ch <- heldDesc }

func (e *expiries) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(len(e.notAfter)))
	var soonest time.Time
	for _, t := range e.notAfter {
		if soonest.IsZero() || t.Before(soonest) {
			soonest = t
		}
	}
	if !soonest.IsZero() {
		ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, time.Until(soonest).Hours()/24)
	}
}

// events is certmagic's event hook: it limits the zone's orders and counts them.
type events struct {
	limiter *rate.Limiter // nil: no limit
	storage certmagic.Storage
}

func newEvents(ordersPerHour int, storage certmagic.Storage) *events {
	registerMetrics.Do(func() { prometheus.MustRegister(ordersTotal, held) })
	e := &events{storage: storage}
	if ordersPerHour > 0 {
		// A burst of a tenth of the hour's allowance: a zone's start (or a batch of new
		// hostnames) is served at once, a flood is spread over the hour.
		e.limiter = rate.NewLimiter(rate.Limit(float64(ordersPerHour)/3600), max(1, ordersPerHour/10))
	}
	return e
}

func kindOf(data map[string]any) string {
	if r, _ := data["renewal"].(bool); r {
		return "renewal"
	}
	return "new"
}

func (e *events) on(ctx context.Context, event string, data map[string]any) error {
	switch event {
	case "cert_obtaining":
		if e.limiter != nil && !e.limiter.Allow() {
			ordersTotal.WithLabelValues(kindOf(data), "limited").Inc()
			// No retry loop here: the handshake that asked fails now, and the next one (or
			// the next renewal check) asks again.
			return certmagic.ErrNoRetry{Err: ErrOrderLimit}
		}
	case "cert_failed":
		ordersTotal.WithLabelValues(kindOf(data), "failed").Inc()
	case "cert_obtained":
		ordersTotal.WithLabelValues(kindOf(data), "obtained").Inc()
		name, _ := data["identifier"].(string)
		path, _ := data["certificate_path"].(string)
		if name == "" || path == "" {
			return nil
		}
		chain, err := e.storage.Load(ctx, path)
		if err != nil {
			return nil
		}
		if b, _ := pem.Decode(chain); b != nil {
			if leaf, err := x509.ParseCertificate(b.Bytes); err == nil {
				held.mu.Lock()
				held.notAfter[name] = leaf.NotAfter
				held.mu.Unlock()
			}
		}
	}
	return nil
}
