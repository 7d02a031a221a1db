package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/bus"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// What a handler asks to run after its transaction runs once the transaction has committed,
// so it sees what the handler recorded (a worker woken by it finds the work), and never for
// an attempt that rolled back; in batches and one message at a time alike.
func TestAfterCommitRunsOnceTheEffectIsVisible(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := newPool(t)
			cfg := testConfig(t)
			conn := dial(t, cfg)
			consumer := fmt.Sprintf("after-%v", batch)
			effect := recordEffect(consumer, nil)
			var failedOnce atomic.Bool
			var afterRolledBack, ran atomic.Int64
			seen := make(chan int, 10) // effects visible from outside when each hook ran
			run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
			ready := newReadiness()
			run(t, "consume", func(ctx context.Context) error {
				return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: consumer + ".q", Keys: []string{"test.after.*"}, Batch: batch,
					Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
						if err := effect(ctx, btx, d); err != nil {
							return err
						}
						if !failedOnce.Swap(true) {
							btx.AfterCommit(func() { afterRolledBack.Add(1) })
							return errors.New("fails once, after asking for a hook")
						}
						var ev busv1.TestEvent
						d.Decode(&ev)
						btx.AfterCommit(func() {
							ran.Add(1)
							var n int
							// Another connection: only a committed row is there.
							pool.QueryRow(context.Background(), `SELECT count(*) FROM effects WHERE consumer = $1 AND seq = $2`, consumer, ev.Seq).Scan(&n)
							seen <- n
						})
						return nil
					}})
			})
			ready.wait(t)
			if err := publishEvents(ctx, pool, "test.after.event", 1, 3, 3); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				select {
				case n := <-seen:
					if n != 1 {
						t.Fatalf("a hook ran while its effect was not committed (%d rows seen)", n)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("hooks did not run")
				}
			}
			if total, distinct := countEffects(t, pool, consumer); total != 3 || distinct != 3 {
				t.Fatalf("%d effects (%d distinct) for 3 events", total, distinct)
			}
			if afterRolledBack.Load() != 0 || ran.Load() != 3 {
				t.Fatalf("hooks of rolled-back attempts ran %d times, of committed ones %d, want 0 and 3", afterRolledBack.Load(), ran.Load())
			}
		})
	}
}
