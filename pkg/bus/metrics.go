package bus

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The bus's families on /metrics (pkg/metrics). Queue labels drop the namespace, so a
// deployment's dashboards do not depend on BUS_NAMESPACE; keys and queues are a fixed set.
var (
	publishedEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_bus_published_total",
		Help: "Events the outbox relay published and the broker confirmed, by routing key.",
	}, []string{"key"})
	deliveredEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_bus_deliveries_total",
		Help: "Events delivered to a consumer (redeliveries included), by queue.",
	}, []string{"queue"})
	retriedEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_bus_retries_total",
		Help: "Handler failures retried after a backoff, by queue.",
	}, []string{"queue"})
	deadLetters = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_bus_dead_letters_total",
		Help: "Events parked in the dead-letter queue (refused, or out of attempts), by queue.",
	}, []string{"queue"})
)

func init() { prometheus.MustRegister(outboxes) }

// showQueue puts a consumed queue's series on /metrics at zero, so a dashboard sees the queue
// (and a rate over it) before its first delivery, retry or dead letter.
func showQueue(queue string) {
	deliveredEvents.WithLabelValues(queue)
	retriedEvents.WithLabelValues(queue)
	deadLetters.WithLabelValues(queue)
}

// queueLabel is a queue's name without the namespace.
func (s *consumeSession) queueLabel() string {
	return strings.TrimPrefix(s.queue, s.conn.cfg.Namespace)
}

// outboxes reports, at each scrape, the unsent rows of every outbox a running relay serves:
// how many, and how long the oldest has waited (0 when none). A relay that cannot keep up, or
// a broker that refuses, shows as both growing.
var outboxes = &outboxCollector{
	pools: map[*pgxpool.Pool]int{},
	depth: prometheus.NewDesc("tori_bus_outbox_depth", "Outbox rows not yet published.", nil, nil),
	age: prometheus.NewDesc("tori_bus_outbox_oldest_age_seconds",
		"How long the oldest unpublished outbox row has waited, 0 when there is none.", nil, nil),
}

// A scrape waits this long for the outbox query; past it the two gauges are left out.
const outboxScrapeTimeout = time.Second

type outboxCollector struct {
	mu         sync.Mutex
	pools      map[*pgxpool.Pool]int // relays running on each pool
	depth, age *prometheus.Desc
}

// watch adds pool for as long as the returned func is not called (Relay.Run's lifetime).
func (o *outboxCollector) watch(pool *pgxpool.Pool) func() {
	o.mu.Lock()
	o.pools[pool]++
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		if o.pools[pool]--; o.pools[pool] <= 0 {
			delete(o.pools, pool)
		}
		o.mu.Unlock()
	}
}

func (o *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.depth
	ch <- o.age
}

func (o *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	pools := make([]*pgxpool.Pool, 0, len(o.pools))
	for p := range o.pools {
		pools = append(pools, p)
	}
	o.mu.Unlock()
	if len(pools) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), outboxScrapeTimeout)
	defer cancel()
	var depth, age float64
	for _, p := range pools {
		var n int64
		var oldest float64
		err := p.QueryRow(ctx, `
			SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
			FROM outbox WHERE sent_at IS NULL`).Scan(&n, &oldest)
		if err != nil {
			return // no answer rather than a wrong one
		}
		depth += float64(n)
		age = max(age, oldest)
	}
	ch <- prometheus.MustNewConstMetric(o.depth, prometheus.GaugeValue, depth)
	ch <- prometheus.MustNewConstMetric(o.age, prometheus.GaugeValue, age)
}
