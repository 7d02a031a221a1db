package bus_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// A message whose handler always fails ends in the dead-letter queue after MaxAttempts tries,
// one marked Permanent after one; both carry the reason. Replayed once the handler is fixed,
// each is consumed once.
func TestPoisonMessageIsDeadLetteredThenReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)

	var fixed atomic.Bool
	var mu sync.Mutex
	calls := map[string]int{}
	handle := func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
		var ev busv1.TestEvent
		if err := d.Decode(&ev); err != nil {
			return err
		}
		mu.Lock()
		calls[ev.Payload]++
		mu.Unlock()
		if !fixed.Load() {
			if ev.Payload == "permanent" {
				return bus.Permanent(errors.New("cannot ever handle this"))
			}
			return errors.New("poison: handler always fails")
		}
		return recordEffect("poison", nil)(ctx, btx, d)
	}
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)
	ready := newReadiness()
	c := startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "poison.effects", Keys: []string{"test.poison.*"}, Handle: handle})
	})
	queue := cfg.Namespace + "poison.effects"
	ready.wait(t)
	err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := bus.Publish(ctx, tx, "test.poison.event", &busv1.TestEvent{Seq: 1, Payload: "poison"}); err != nil {
			return err
		}
		return bus.Publish(ctx, tx, "test.poison.event", &busv1.TestEvent{Seq: 2, Payload: "permanent"})
	})
	if err != nil {
		t.Fatal(err)
	}

	dlq := cfg.Namespace + "tori.dead-letter"
	eventually(t, 20*time.Second, "two dead letters", func() bool { return queueDepth(t, dlq) == 2 })
	mu.Lock()
	if calls["poison"] != cfg.MaxAttempts || calls["permanent"] != 1 {
		t.Errorf("handler calls: %v, want poison %d and permanent 1", calls, cfg.MaxAttempts)
	}
	mu.Unlock()

	// Look at them without taking them: closing the channel puts them back.
	ch := rawChannel(t)
	for range 2 {
		d, ok, err := ch.Get(dlq, false)
		if err != nil || !ok {
			t.Fatalf("get dead letter: ok=%v err=%v", ok, err)
		}
		var ev busv1.TestEvent
		if err := proto.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		wantReason, wantAttempts := "poison: handler always fails", int32(cfg.MaxAttempts)
		if ev.Payload == "permanent" {
			wantReason, wantAttempts = "cannot ever handle this", 1
		}
		if r, _ := d.Headers["x-tori-reason"].(string); !strings.Contains(r, wantReason) {
			t.Errorf("%s: x-tori-reason %q, want it to say %q", ev.Payload, r, wantReason)
		}
		if a := d.Headers["x-tori-attempts"]; a != wantAttempts {
			t.Errorf("%s: x-tori-attempts %v (%T), want %d", ev.Payload, a, a, wantAttempts)
		}
		if q := d.Headers["x-tori-queue"]; q != queue {
			t.Errorf("%s: x-tori-queue %v, want %s", ev.Payload, q, queue)
		}
		if k := d.Headers["x-tori-routing-key"]; k != "test.poison.event" {
			t.Errorf("%s: x-tori-routing-key %v", ev.Payload, k)
		}
		if d.MessageId == "" || d.Type != "tori.bus.v1.TestEvent" {
			t.Errorf("%s: message id %q type %q", ev.Payload, d.MessageId, d.Type)
		}
	}
	ch.Close()
	eventually(t, 5*time.Second, "dead letters back in their queue", func() bool { return queueDepth(t, dlq) == 2 })

	fixed.Store(true)
	n, err := conn.ReplayDeadLetters(ctx, 10)
	if err != nil || n != 2 {
		t.Fatalf("replay: %d, %v; want 2", n, err)
	}
	eventually(t, 20*time.Second, "replayed messages consumed", func() bool {
		total, _ := countEffects(t, pool, "poison")
		return total == 2
	})
	if d := queueDepth(t, dlq); d != 0 {
		t.Errorf("dead-letter queue holds %d after replay", d)
	}
	c.settle(queue)
	if total, distinct := countEffects(t, pool, "poison"); total != 2 || distinct != 2 {
		t.Errorf("effects %d (%d distinct), want 2", total, distinct)
	}
	mu.Lock()
	defer mu.Unlock()
	// A replay starts counting afresh: one more call each, and it succeeded.
	if calls["poison"] != cfg.MaxAttempts+1 || calls["permanent"] != 2 {
		t.Errorf("handler calls after replay: %v", calls)
	}
}

// A replay keeps a message whose queue is gone in the dead-letter queue.
func TestReplayKeepsMessagesWithoutQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	conn := dial(t, cfg)
	ch := rawChannel(t)
	dlq := cfg.Namespace + "tori.dead-letter"
	err := ch.PublishWithContext(ctx, cfg.Namespace+"tori.dlx", "test.gone.event", false, false, rawEvent(t, uuid.NewString(), 1, amqp.Table{
		"x-tori-queue":       cfg.Namespace + "no.such.queue",
		"x-tori-routing-key": "test.gone.event",
	}))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "dead letter", func() bool { return queueDepth(t, dlq) == 1 })
	n, err := conn.ReplayDeadLetters(ctx, 10)
	if err != nil || n != 0 {
		t.Fatalf("replay: %d, %v; want 0", n, err)
	}
	eventually(t, 5*time.Second, "dead letter kept", func() bool { return queueDepth(t, dlq) == 1 })
}
