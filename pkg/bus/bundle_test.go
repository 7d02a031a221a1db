package bus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// bundleContentType is the relay's wire format for a bundle (bundle.go), written out here so
// that a change to it is a change a test sees.
const bundleContentType = "application/vnd.tori.bundle+x-protobuf"

// bundled is a TestEvent as a bundle carries it.
func bundled(t testing.TB, id string, seq int64) *busv1.BundledEvent {
	t.Helper()
	body, err := proto.Marshal(&busv1.TestEvent{Seq: seq, Payload: fmt.Sprintf("bundled %d", seq)})
	if err != nil {
		t.Fatal(err)
	}
	return &busv1.BundledEvent{Id: id, Type: "tori.bus.v1.TestEvent", Body: body, CreatedUnixNanos: time.Now().UnixNano()}
}

// bundleOf is a bundle as the relay would publish it.
func bundleOf(t testing.TB, events ...*busv1.BundledEvent) amqp.Publishing {
	t.Helper()
	body, err := proto.Marshal(&busv1.Bundle{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		ContentType:  bundleContentType,
		MessageId:    events[0].Id,
		Type:         "tori.bus.v1.Bundle",
		Body:         body,
	}
}

// The relay sends each run of consecutive outbox rows with one routing key as one message,
// in the order of the outbox: a bundle when the run has several events, the event alone
// when it has one.
func TestRelayBundlesRunsOfOneKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	spy := rawChannel(t) // the exchange is there: dial declared it
	q, err := spy.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.QueueBind(q.Name, "test.runs.*", cfg.Namespace+"tori.events", false, nil); err != nil {
		t.Fatal(err)
	}

	keys := []string{"test.runs.a", "test.runs.a", "test.runs.a", "test.runs.b", "test.runs.a"}
	err = pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		for i, key := range keys {
			if err := bus.Publish(ctx, tx, key, &busv1.TestEvent{Seq: int64(i + 1)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, "relay", bus.NewRelay(conn, pool, nil).Run)

	type got struct {
		key, contentType string
		seqs             []int64
	}
	var messages []got
	eventually(t, 20*time.Second, "three messages", func() bool {
		d, ok, err := spy.Get(q.Name, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return false
		}
		m := got{key: d.RoutingKey, contentType: d.ContentType}
		if d.ContentType == bundleContentType {
			if d.Type != "tori.bus.v1.Bundle" {
				t.Errorf("a bundle's type is %q", d.Type)
			}
			var b busv1.Bundle
			if err := proto.Unmarshal(d.Body, &b); err != nil {
				t.Fatal(err)
			}
			if len(b.Events) > 0 && d.MessageId != b.Events[0].Id {
				t.Errorf("a bundle's message id %q is not its first event's %q", d.MessageId, b.Events[0].Id)
			}
			for _, e := range b.Events {
				var ev busv1.TestEvent
				if err := proto.Unmarshal(e.Body, &ev); err != nil || e.Type != "tori.bus.v1.TestEvent" || uuid.Validate(e.Id) != nil {
					t.Fatalf("bundled event %+v: %v", e, err)
				}
				m.seqs = append(m.seqs, ev.Seq)
			}
		} else {
			var ev busv1.TestEvent
			if err := proto.Unmarshal(d.Body, &ev); err != nil || d.Type != "tori.bus.v1.TestEvent" {
				t.Fatalf("lone event %+v: %v", d, err)
			}
			m.seqs = append(m.seqs, ev.Seq)
		}
		messages = append(messages, m)
		return len(messages) == 3
	})
	want := []got{
		{"test.runs.a", bundleContentType, []int64{1, 2, 3}},
		{"test.runs.b", "application/x-protobuf", []int64{4}},
		{"test.runs.a", "application/x-protobuf", []int64{5}},
	}
	for i := range want {
		if messages[i].key != want[i].key || messages[i].contentType != want[i].contentType || !slices.Equal(messages[i].seqs, want[i].seqs) {
			t.Fatalf("message %d: %+v, want %+v", i, messages[i], want[i])
		}
	}
}

// Each event of a bundle comes to its own end: one whose handler fails for good and one with
// no id are dead-lettered alone, as messages of their own; a second copy of an event, in the
// same bundle or in a later one (the relay published again), has no second effect; and the
// bundles are acknowledged once all their events are done.
func TestBundledEventsEndOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	conn := dial(t, cfg)
	effect := recordEffect("bundled", nil)
	handle := func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
		var ev busv1.TestEvent
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if ev.Seq == 3 {
			return bus.Permanent(errors.New("seq 3 never works"))
		}
		return effect(ctx, btx, d)
	}
	ready := newReadiness()
	c := startConsumer(t, func(ctx context.Context) error {
		return conn.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "bundled.effects", Keys: []string{"test.bundled.*"}, Handle: handle})
	})
	ready.wait(t)

	ids := make([]string, 7)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	ch := rawChannel(t)
	publish := func(msg amqp.Publishing) {
		t.Helper()
		if err := ch.PublishWithContext(ctx, cfg.Namespace+"tori.events", "test.bundled.event", false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	publish(bundleOf(t, bundled(t, ids[1], 1), bundled(t, ids[2], 2), bundled(t, ids[3], 3),
		bundled(t, "", 4), bundled(t, ids[5], 5), bundled(t, ids[5], 5)))
	publish(bundleOf(t, bundled(t, ids[1], 1), bundled(t, ids[2], 2), bundled(t, ids[6], 6)))

	dlq := cfg.Namespace + "tori.dead-letter"
	eventually(t, 20*time.Second, "four effects and two dead letters", func() bool {
		n, _ := countEffects(t, pool, "bundled")
		return n >= 4 && queueDepth(t, dlq) == 2
	})
	c.settle(cfg.Namespace + "bundled.effects")
	rows, _ := pool.Query(ctx, `SELECT seq FROM effects WHERE consumer = 'bundled' ORDER BY seq`)
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []int64{1, 2, 5, 6}) {
		t.Fatalf("effects for seqs %v, want one each for 1, 2, 5 and 6", seqs)
	}

	reasons := map[string]string{} // message id → reason
	for range 2 {
		d, ok, err := ch.Get(dlq, true)
		if err != nil || !ok {
			t.Fatalf("get dead letter: %v %v", ok, err)
		}
		if d.ContentType != "application/x-protobuf" || d.Type != "tori.bus.v1.TestEvent" {
			t.Errorf("dead letter %s is %s of type %s, not an event of its own", d.MessageId, d.ContentType, d.Type)
		}
		reasons[d.MessageId], _ = d.Headers["x-tori-reason"].(string)
	}
	if !strings.Contains(reasons[ids[3]], "seq 3 never works") || !strings.Contains(reasons[""], "no id") || len(reasons) != 2 {
		t.Fatalf("dead letters by id: %q; want %s for its handler's error and the id-less event", reasons, ids[3])
	}
}

// A bundle is judged like a message: one from a publisher that does not own its routing key
// is refused event by event (each dead-lettered alone, so each can be replayed alone), and
// one that cannot be read is dead-lettered whole, exactly as it came.
func TestRefusedBundlesAreDeadLettered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	base := testConfig(t)
	deploys := testinfra.DialBusAs(t, base, bus.PrincipalDeploys, testLogger())
	var h heard
	ready := newReadiness()
	run(t, "consume as deploys", func(ctx context.Context) error {
		return deploys.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "deploys.bundles", Keys: []string{"apps.thing.*"},
			Handle: func(_ context.Context, _ bus.Tx, d bus.Delivery) error { h.add(d); return nil }})
	})
	ready.wait(t)

	logs := rawAs(t, bus.PrincipalLogs)
	forged := bundleOf(t, bundled(t, uuid.NewString(), 1), bundled(t, uuid.NewString(), 2))
	forged.UserId = bus.UserName("test.", bus.PrincipalLogs)
	if err := logs.PublishWithContext(ctx, base.Namespace+"tori.events", "apps.thing.forged", false, false, forged); err != nil {
		t.Fatal(err)
	}
	apps := rawAs(t, bus.PrincipalApps)
	garbled := amqp.Publishing{ContentType: bundleContentType, Type: "tori.bus.v1.Bundle", MessageId: uuid.NewString(),
		UserId: bus.UserName("test.", bus.PrincipalApps), Body: []byte("\x0a\xff\xff\xff not a bundle")}
	if err := apps.PublishWithContext(ctx, base.Namespace+"tori.events", "apps.thing.garbled", false, false, garbled); err != nil {
		t.Fatal(err)
	}

	dlq := base.Namespace + "tori.dead-letter"
	eventually(t, 20*time.Second, "three dead letters", func() bool { return queueDepth(t, dlq) == 3 })
	ch := rawChannel(t)
	var events, whole int
	for range 3 {
		d, ok, err := ch.Get(dlq, true)
		if err != nil || !ok {
			t.Fatalf("get dead letter: %v %v", ok, err)
		}
		reason, _ := d.Headers["x-tori-reason"].(string)
		switch d.ContentType {
		case "application/x-protobuf":
			events++
			if !strings.Contains(reason, "does not own routing key") || d.Type != "tori.bus.v1.TestEvent" {
				t.Errorf("forged event dead-lettered as %s with %q", d.Type, reason)
			}
		case bundleContentType:
			whole++
			if !strings.Contains(reason, "unreadable bundle") || string(d.Body) != string(garbled.Body) || d.MessageId != garbled.MessageId {
				t.Errorf("garbled bundle dead-lettered as %q (%s) with %q", d.Body, d.MessageId, reason)
			}
		default:
			t.Errorf("dead letter of content type %q", d.ContentType)
		}
	}
	if events != 2 || whole != 1 {
		t.Fatalf("%d forged events and %d whole bundles dead-lettered, want 2 and 1", events, whole)
	}
	if got := h.payloads(); len(got) != 0 {
		t.Fatalf("handled %q", got)
	}
}

// A listener hears each event of a bundle, in order.
func TestListenerHearsBundledEventsInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	conn := dial(t, cfg)
	var mu sync.Mutex
	var got []int64
	run(t, "listen", func(ctx context.Context) error {
		return conn.Listen(ctx, []string{"test.hear.*"}, func(ctx context.Context, d bus.Delivery) error {
			var ev busv1.TestEvent
			if err := d.Decode(&ev); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev.Seq)
			return nil
		})
	})
	heardAny := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	}
	ch := rawChannel(t)
	publish := func(msg amqp.Publishing) {
		t.Helper()
		if err := ch.PublishWithContext(ctx, cfg.Namespace+"tori.events", "test.hear.event", false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	// The listener's queue is server-named: a lone marker until one is heard says it is bound.
	eventually(t, 15*time.Second, "the listener bound", func() bool {
		publish(rawEvent(t, uuid.NewString(), 0, nil))
		time.Sleep(50 * time.Millisecond)
		return heardAny()
	})
	publish(bundleOf(t, bundled(t, uuid.NewString(), 1), bundled(t, uuid.NewString(), 2), bundled(t, uuid.NewString(), 3)))
	eventually(t, 10*time.Second, "the bundle's three events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1] == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if tail := got[len(got)-3:]; !slices.Equal(tail, []int64{1, 2, 3}) {
		t.Fatalf("heard %v, want the bundle's 1, 2, 3 last, in order", got)
	}
}
