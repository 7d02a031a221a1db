package bus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

// deliverUnderFaults publishes total events through the outbox (many transactions, several
// publishers, spread over a few seconds) while fault breaks the broker link, and checks that
// every event was consumed with exactly one effect.
func deliverUnderFaults(t *testing.T, cfg bus.Config, total int, fault func(t *testing.T, conn *bus.Conn)) {
	pool := newPool(t)
	conn := dial(t, cfg)
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	c := startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{
			Ready:    ready.fire,
			Queue:    "faults.effects",
			Keys:     []string{"test.faults.*"},
			Handle:   recordEffect("faults", nil),
			Prefetch: 32,
		})
	})
	ready.wait(t)

	ctx := context.Background()
	start := time.Now()
	const publishers, perTx = 4, 50
	per := total / publishers
	var wg sync.WaitGroup
	errs := make(chan error, publishers)
	for p := range publishers {
		wg.Go(func() {
			// Paced, so that the faults hit a stream of traffic rather than its tail.
			for from := p * per; from < (p+1)*per; from += 2 * perTx {
				if err := publishEvents(ctx, pool, "test.faults.event", from, min(2*perTx, (p+1)*per-from), perTx); err != nil {
					errs <- err
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	fault(t, conn)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("published %d events in %s", total, time.Since(start).Round(time.Millisecond))

	eventually(t, 2*time.Minute, "every event consumed", func() bool {
		n, _ := countEffects(t, pool, "faults")
		return n >= total
	})
	t.Logf("consumed %d events %s after the first publish", total, time.Since(start).Round(time.Millisecond))
	// Every row confirmed and marked, and every delivery settled, so no late redelivery can
	// still act on what is counted next.
	eventually(t, 30*time.Second, "outbox drained", func() bool {
		var unsent int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&unsent); err != nil {
			t.Fatal(err)
		}
		return unsent == 0
	})
	c.settle(cfg.Namespace + "faults.effects")
	n, distinct := countEffects(t, pool, "faults")
	if n != total || distinct != total {
		t.Fatalf("effects: %d rows for %d distinct events, want %d and %d", n, distinct, total, total)
	}
	var processed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM processed_messages`).Scan(&processed); err != nil {
		t.Fatal(err)
	}
	if processed != total {
		t.Fatalf("processed_messages has %d ids, want %d", processed, total)
	}
}
