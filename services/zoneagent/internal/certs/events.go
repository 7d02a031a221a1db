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
)

// Metrics of the zone's certificates, on the agent's /metrics.
var (
	ordersTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_edge_certificate_orders_total",
		Help: "Certificate orders by the edge: kind new or renewal; result obtained, failed, limited (refused by the zone's order budget) or limited_account (by the account's daily cap).",
	}, []string{"kind", "result"})
	refusalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_edge_certificate_refusals_total",
		Help: "Certificate orders the edge refused before asking the CA: kind new or renewal; reason zone_budget (the zone's hourly budget, or for new orders their share of it) or account_daily_cap.",
	}, []string{"kind", "reason"})
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

// events is certmagic's event hook: it holds orders to the zone's budget (budget.go), counts
// them, and follows each custom hostname's certificate state.
type events struct {
	budget  *budget // nil: no bound (the local CA)
	storage certmagic.Storage
	cache   *certmagic.Cache
	owner   func(ctx context.Context, host string) (Owner, bool)
	onState func(ctx context.Context, host string, o Owner, s State, at time.Time)
	kept    func(host string) bool // ordered ahead by Keep, retried with backoff
	mu      sync.Mutex
	states  map[string]State
}

func newEvents(o Options) *events {
	registerMetrics.Do(func() { prometheus.MustRegister(ordersTotal, refusalsTotal, held) })
	e := &events{storage: o.Storage, owner: o.Owner, onState: o.OnState, states: map[string]State{}}
	if o.ACME != nil { // the local CA has no limits to protect: its signatures are not bounded
		e.budget = newBudget(o.OrdersPerHour, o.NewOrdersPerAccountPerDay, time.Now())
	}
	return e
}

func kindOf(data map[string]any) string {
	if r, _ := data["renewal"].(bool); r {
		return "renewal"
	}
	return "new"
}

// maxErrorLen bounds the reason kept and shown for a failed order.
const maxErrorLen = 500

func errorText(data map[string]any) string {
	msg := "the order failed"
	if err, ok := data["error"].(error); ok && err != nil {
		msg = err.Error()
	}
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen]
	}
	return msg
}

func (e *events) on(ctx context.Context, event string, data map[string]any) error {
	name, _ := data["identifier"].(string)
	now := time.Now()
	switch event {
	case "cert_obtaining":
		if reason, err := e.allow(ctx, name, kindOf(data) == "renewal"); err != nil {
			ordersTotal.WithLabelValues(kindOf(data), limitedResult(err)).Inc()
			refusalsTotal.WithLabelValues(kindOf(data), reason).Inc()
			e.report(ctx, name, Event{Step: Limited, Err: err.Error(), At: now})
			// On demand, no retry loop: the handshake that asked fails now and the next one
			// asks again. A hostname the edge orders ahead (Keep) is retried with certmagic's
			// backoff.
			if e.kept != nil && e.kept(name) {
				return err
			}
			return certmagic.ErrNoRetry{Err: err}
		}
		e.report(ctx, name, Event{Step: Ordering, At: now})
	case "cert_failed":
		ordersTotal.WithLabelValues(kindOf(data), "failed").Inc()
		e.report(ctx, name, Event{Step: Failed, Err: errorText(data), At: now})
	case "cert_obtained":
		ordersTotal.WithLabelValues(kindOf(data), "obtained").Inc()
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
				e.report(ctx, name, Event{Step: Obtained, NotAfter: leaf.NotAfter, At: now})
			}
		}
	case "cached_managed_cert":
		// A certificate found in the zone's storage (another edge ordered it, or this one
		// before a restart): issued, as far as this hostname's owner is concerned.
		sans, _ := data["sans"].([]string)
		for _, san := range sans {
			if e.cache == nil {
				break
			}
			for _, c := range e.cache.AllMatchingCertificates(san) {
				if c.Leaf != nil {
					e.report(ctx, san, Event{Step: Obtained, NotAfter: c.Leaf.NotAfter, At: now})
					break
				}
			}
		}
	}
	return nil
}

// allow asks the budget for one order of name's account; a renewal never asks whose it is.
func (e *events) allow(ctx context.Context, name string, renewal bool) (reason string, err error) {
	if e.budget == nil {
		return "", nil
	}
	var account string
	if !renewal && e.owner != nil {
		if o, ok := e.owner(ctx, name); ok {
			account = o.AccountID
		}
	}
	return e.budget.allow(renewal, account, time.Now())
}

func limitedResult(err error) string {
	if errors.Is(err, ErrAccountOrderLimit) {
		return "limited_account"
	}
	return "limited"
}

// report follows a custom hostname's certificate state and tells OnState of each change.
// The apps' own hostnames are not reported: nobody keeps a record of them.
func (e *events) report(ctx context.Context, name string, ev Event) {
	if e.onState == nil || e.owner == nil || name == "" {
		return
	}
	o, ok := e.owner(ctx, name)
	if !ok || !o.Custom {
		return
	}
	e.mu.Lock()
	prev := e.states[name]
	next := Next(prev, ev)
	changed := next != prev
	e.states[name] = next
	e.mu.Unlock()
	if changed {
		e.onState(ctx, name, o, next, ev.At)
	}
}

// forget drops a hostname's state when the edge stops serving it, so a return starts afresh.
func (e *events) forget(name string) {
	e.mu.Lock()
	delete(e.states, name)
	e.mu.Unlock()
}
