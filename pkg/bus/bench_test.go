package bus_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// BenchmarkOutboxToConsumer publishes b.N events through the outbox with a relay and a
// consumer running (`make bench-bus`), and measures end to end: events/s from the first commit
// to the last effect, and each event's latency from its publish (just before its transaction
// commits) to its handler writing the effect. Two loads:
//
//   - burst: two publishers commit transactions of 100 as fast as they can; events/s is the
//     pipeline's throughput, and latency is mostly time spent queued behind earlier events.
//   - paced: a transaction of 10 every 10ms at most (up to 1000 events/s, below the throughput),
//     so latency is that of the path itself: NOTIFY, relay, broker, consumer.
func BenchmarkOutboxToConsumer(b *testing.B) {
	b.Run("burst", func(b *testing.B) {
		benchOutbox(b, func(ctx context.Context, pool *pgxpool.Pool, n int) error {
			const publishers = 2
			var wg sync.WaitGroup
			errs := make(chan error, publishers)
			for p := range publishers {
				from, to := p*n/publishers, (p+1)*n/publishers
				wg.Go(func() { errs <- publishEvents(ctx, pool, "test.bench.event", from, to-from, 100) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("paced", func(b *testing.B) {
		benchOutbox(b, func(ctx context.Context, pool *pgxpool.Pool, n int) error {
			const perTx = 10
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for from := 0; from < n; from += perTx {
				if err := publishEvents(ctx, pool, "test.bench.event", from, min(perTx, n-from), perTx); err != nil {
					return err
				}
				<-tick.C
			}
			return nil
		})
	})
}

func benchOutbox(b *testing.B, publish func(ctx context.Context, pool *pgxpool.Pool, n int) error) {
	ctx := context.Background()
	pool := newPool(b)
	cfg := testConfig(b)
	conn := dial(b, cfg)
	n := b.N
	latencies := make([]time.Duration, n)
	seen := make([]atomic.Bool, n)
	var consumed atomic.Int64
	done := make(chan struct{})
	handle := func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
		tx := btx.Pgx()
		var ev busv1.TestEvent
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO effects (consumer, seq, message_id) VALUES ('bench', $1, $2)`, ev.Seq, d.ID); err != nil {
			return err
		}
		// A handler called again (its batch rolled back) must not count twice.
		if seen[ev.Seq].CompareAndSwap(false, true) {
			latencies[ev.Seq] = time.Since(time.Unix(0, ev.SentUnixNanos))
			if consumed.Add(1) == int64(n) {
				close(done)
			}
		}
		return nil
	}
	run(b, "relay", bus.NewRelay(conn, pool, nil).Run)
	run(b, "consume", func(ctx context.Context) error {
		// A window wide enough for the burst: the broker stops delivering while Prefetch
		// messages are unacknowledged, and each waits for its batch's commit to reach the disk
		// (several milliseconds when others write too). At 64 the consumer fell behind the
		// publishers; see the package README.
		return conn.Consume(ctx, pool, bus.Subscription{Queue: "bench.effects", Keys: []string{"test.bench.*"}, Handle: handle, Prefetch: 512, Batch: true})
	})
	waitQueue(b, cfg.Namespace+"bench.effects")

	b.ResetTimer()
	before := readMachineCPU(b)
	start := time.Now()
	published := make(chan error, 1)
	go func() { published <- publish(ctx, pool, n) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d events consumed", consumed.Load(), n)
	}
	elapsed := time.Since(start)
	used := readMachineCPU(b)
	b.StopTimer()
	if err := <-published; err != nil {
		b.Fatal(err)
	}

	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(n-1, int(p*float64(n)))]) / float64(time.Millisecond)
	}
	rate := float64(n) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
	if n > 1 {
		fmt.Printf("%s: %d events in %s: %.0f events/s, latency p50 %.1f ms, p99 %.1f ms\n",
			b.Name(), n, elapsed.Round(time.Millisecond), rate, pct(0.50), pct(0.99))
		// Per event only where the machine is busy throughout: paced, it is mostly idle time.
		if strings.HasSuffix(b.Name(), "/burst") {
			fmt.Printf("  %s\n", used.perEvent(before, n))
		}
	}
}
