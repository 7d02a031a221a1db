package bus_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// The same message id delivered again, also while its first copy is still being handled,
// has one effect; and the handler runs once per id.
func TestRedeliveredMessageHasOneEffect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	var calls atomic.Int64
	effect := recordEffect("dup", &calls)
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	c := startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "dup.effects", Keys: []string{"test.dup.*"}, Prefetch: 8,
			Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
				// Slow enough that copies of one message are handled at the same time.
				time.Sleep(100 * time.Millisecond)
				return effect(ctx, btx, d)
			}})
	})
	ready.wait(t)
	queue := cfg.Namespace + "dup.effects"

	// Behind the relay's back: two ids, each published three times, all at once.
	ch := rawChannel(t)
	a, b := uuid.NewString(), uuid.NewString()
	for _, m := range []struct {
		id  string
		seq int64
	}{{a, 1}, {b, 2}, {a, 1}, {b, 2}, {a, 1}, {b, 2}} {
		if err := ch.PublishWithContext(ctx, cfg.Namespace+"tori.events", "test.dup.event", false, false, rawEvent(t, m.id, m.seq, nil)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "both consumed", func() bool {
		_, distinct := countEffects(t, pool, "dup")
		return distinct == 2
	})
	c.settle(queue) // the later copies have finished, each acknowledged
	if total, _ := countEffects(t, pool, "dup"); total != 2 {
		t.Fatalf("%d effects for 2 messages", total)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("handler ran %d times for 2 message ids", n)
	}

	// Through the outbox: the relay publishes a row again when it never learnt it was sent.
	c.start()
	ready.wait(t)
	if err := publishEvents(ctx, pool, "test.dup.event", 3, 1, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "outbox event consumed", func() bool {
		_, distinct := countEffects(t, pool, "dup")
		return distinct == 3
	})
	if _, err := pool.Exec(ctx, `UPDATE outbox SET sent_at = NULL`); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "row published again", func() bool {
		var unsent int
		pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&unsent)
		return unsent == 0
	})
	c.settle(queue)
	if total, _ := countEffects(t, pool, "dup"); total != 3 {
		t.Fatalf("%d effects for 3 messages", total)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("handler ran %d times for 3 message ids", n)
	}
}

// Production's queue type: the consumer's quorum queue (with its delivery limit and
// dead-letter exchange) and the quorum dead-letter queue are accepted by the broker and work.
func TestQuorumQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	cfg.QueueType = "quorum"
	conn := dial(t, cfg)
	effect := recordEffect("quorum", nil)
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	run(t, "consume", func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "quorum.effects", Keys: []string{"test.quorum.*"},
			Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
				if d.RoutingKey == "test.quorum.poison" {
					return bus.Permanent(errors.New("poison"))
				}
				return effect(ctx, btx, d)
			}})
	})
	ready.wait(t)
	if err := publishEvents(ctx, pool, "test.quorum.event", 1, 10, 10); err != nil {
		t.Fatal(err)
	}
	if err := publishEvents(ctx, pool, "test.quorum.poison", 11, 1, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "events consumed", func() bool {
		n, _ := countEffects(t, pool, "quorum")
		return n == 10
	})
	eventually(t, 20*time.Second, "poison dead-lettered", func() bool { return queueDepth(t, cfg.Namespace+"tori.dead-letter") == 1 })
}

// Under a burst the consumer handles many deliveries in one transaction. One that fails there
// costs the others nothing: the batch is rolled back and its messages handled one by one, so
// every other event has exactly one effect, the failing ones are retried or dead-lettered,
// and every delivery is acknowledged (the queue ends empty).
func TestFailureInABatchCostsTheOthersNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	var calls atomic.Int64
	var flakyFailed sync.Map // seq → true once it has failed
	effect := recordEffect("batch", &calls)
	handle := func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
		var ev busv1.TestEvent
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		switch {
		case ev.Seq == 100:
			return bus.Permanent(errors.New("never"))
		case ev.Seq%50 == 7:
			if _, failed := flakyFailed.LoadOrStore(ev.Seq, true); !failed {
				return errors.New("flaky: fails once")
			}
		}
		return effect(ctx, btx, d)
	}
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	c := startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "batch.effects", Keys: []string{"test.batch.*"}, Handle: handle, Prefetch: 64, Batch: true})
	})
	ready.wait(t)
	const total = 400
	if err := publishEvents(ctx, pool, "test.batch.event", 0, total, 200); err != nil {
		t.Fatal(err)
	}
	dlq := cfg.Namespace + "tori.dead-letter"
	eventually(t, 30*time.Second, "all but one consumed, one dead-lettered", func() bool {
		n, _ := countEffects(t, pool, "batch")
		return n >= total-1 && queueDepth(t, dlq) == 1
	})
	c.settle(cfg.Namespace + "batch.effects")
	n, distinct := countEffects(t, pool, "batch")
	if n != total-1 || distinct != total-1 {
		t.Fatalf("effects: %d rows for %d distinct events, want %d and %d", n, distinct, total-1, total-1)
	}
	var flaky int
	flakyFailed.Range(func(_, _ any) bool { flaky++; return true })
	if flaky != total/50 {
		t.Fatalf("%d flaky events failed once, want %d", flaky, total/50)
	}
	// More calls than effects: the batches a failure rolled back ran their handlers again.
	if calls.Load() < int64(total-1) {
		t.Fatalf("%d handler calls for %d effects", calls.Load(), total-1)
	}
}
