package bus_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// metricValue is the value of one series of a family on the default registry (what
// /metrics shows), 0 when it does not exist yet, and whether the family exists at all.
func metricValue(t *testing.T, family string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			}
		}
		return 0, true
	}
	return 0, false
}

// The outbox's depth and age show while rows wait, and publishes, deliveries, retries and
// dead letters move as the relay and a consumer work through them.
func TestBusMetricsMove(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	const key, queue = "test.metrics.event", "metrics.effects"
	keyLabel, queueLabel := map[string]string{"key": key}, map[string]string{"queue": queue}
	published0, _ := metricValue(t, "tori_bus_published_total", keyLabel)

	// Three rows wait in the outbox with no relay running.
	unwatch := bus.WatchOutbox(pool)
	err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		for i, payload := range []string{"fail-once", "permanent", "fine"} {
			if err := bus.Publish(ctx, tx, key, &busv1.TestEvent{Seq: int64(i + 1), Payload: payload}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if depth, ok := metricValue(t, "tori_bus_outbox_depth", nil); !ok || depth < 3 {
		t.Fatalf("tori_bus_outbox_depth %v (present %v) with three rows waiting", depth, ok)
	}
	if age, ok := metricValue(t, "tori_bus_outbox_oldest_age_seconds", nil); !ok || age <= 0 {
		t.Fatalf("tori_bus_outbox_oldest_age_seconds %v (present %v) with rows waiting", age, ok)
	}
	unwatch()

	var mu sync.Mutex
	failed := map[string]bool{}
	ready := newReadiness()
	startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: queue, Keys: []string{"test.metrics.*"},
			Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
				var ev busv1.TestEvent
				if err := d.Decode(&ev); err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case ev.Payload == "permanent":
					return bus.Permanent(errors.New("never handled"))
				case ev.Payload == "fail-once" && !failed[ev.Payload]:
					failed[ev.Payload] = true
					return errors.New("fails once")
				}
				return recordEffect("metrics", nil)(ctx, btx, d)
			}})
	})
	ready.wait(t)
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)

	eventually(t, 20*time.Second, "one dead letter", func() bool {
		n, _ := metricValue(t, "tori_bus_dead_letters_total", queueLabel)
		return n == 1
	})
	eventually(t, 20*time.Second, "two events handled", func() bool {
		n, _ := countEffects(t, pool, "metrics")
		return n == 2
	})
	if n, _ := metricValue(t, "tori_bus_published_total", keyLabel); n-published0 != 3 {
		t.Errorf("tori_bus_published_total{key=%q} moved by %v, want 3", key, n-published0)
	}
	if n, _ := metricValue(t, "tori_bus_deliveries_total", queueLabel); n < 3 {
		t.Errorf("tori_bus_deliveries_total{queue=%q} = %v, want at least 3", queue, n)
	}
	if n, _ := metricValue(t, "tori_bus_retries_total", queueLabel); n < 1 {
		t.Errorf("tori_bus_retries_total{queue=%q} = %v, want at least 1", queue, n)
	}
}
