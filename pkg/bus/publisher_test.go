package bus_test

import (
	"context"
	"errors"
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
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

// rawAs is a plain channel as principal's broker user, for publishing what the package never
// would: a forged key, a borrowed user_id.
func rawAs(t testing.TB, principal string) *amqp.Channel {
	t.Helper()
	ac, err := amqp.Dial(testinfra.ServiceAMQPURL(t, principal))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ac.Close() })
	ch, err := ac.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// heard collects what a handler was given.
type heard struct {
	mu  sync.Mutex
	got []bus.Delivery
}

func (h *heard) add(d bus.Delivery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, d)
}

func (h *heard) payloads() (out []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.got {
		var ev busv1.TestEvent
		if err := proto.Unmarshal(d.Body, &ev); err == nil {
			out = append(out, ev.Payload+" from "+d.Publisher)
		}
	}
	return out
}

// A consumer handles an event only when its publisher owns the routing key: another
// service's key, a borrowed user_id, no user_id, or the default exchange straight into the
// queue all end in the dead-letter queue unhandled.
func TestConsumerHearsOnlyTheOwnerOfARoutingKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	base := testConfig(t)
	apps := testinfra.DialBusAs(t, base, bus.PrincipalApps, testLogger())
	deploys := testinfra.DialBusAs(t, base, bus.PrincipalDeploys, testLogger())
	run(t, "relay as apps", bus.NewRelay(apps, pool, nil).Run)

	var h heard
	ready := newReadiness()
	queue := base.Namespace + "deploys.heard"
	run(t, "consume as deploys", func(ctx context.Context) error {
		return deploys.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "deploys.heard", Keys: []string{"apps.thing.*"}, Prefetch: 1,
			Handle: func(_ context.Context, _ bus.Tx, d bus.Delivery) error { h.add(d); return nil }})
	})
	ready.wait(t)

	publishAsApps := func(payload string) {
		t.Helper()
		err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			return bus.Publish(ctx, tx, "apps.thing.happened", &busv1.TestEvent{Seq: 1, Payload: payload})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	publishAsApps("genuine")
	eventually(t, 20*time.Second, "the genuine event handled", func() bool { return len(h.payloads()) == 1 })

	logs := rawAs(t, bus.PrincipalLogs)
	forge := func(exchange, key string, msg amqp.Publishing) {
		t.Helper()
		body, _ := proto.Marshal(&busv1.TestEvent{Seq: 2, Payload: "forged"})
		msg.MessageId, msg.Type, msg.Body = uuid.NewString(), "tori.bus.v1.TestEvent", body
		if err := logs.PublishWithContext(ctx, exchange, key, false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	logsUser := bus.UserName("test.", bus.PrincipalLogs)
	forge(base.Namespace+"tori.events", "apps.thing.forged", amqp.Publishing{UserId: logsUser})
	forge(base.Namespace+"tori.events", "apps.thing.anonymous", amqp.Publishing{})
	forge("", queue, amqp.Publishing{UserId: logsUser, Headers: amqp.Table{"x-tori-routing-key": "apps.thing.sideways"}})

	// The marker goes through the same queue after the forgeries (Prefetch 1: in order).
	publishAsApps("marker")
	eventually(t, 20*time.Second, "the marker handled", func() bool { return len(h.payloads()) >= 2 })
	if got := strings.Join(h.payloads(), ", "); got != "genuine from apps, marker from apps" {
		t.Fatalf("handled %q; want only apps's two events", got)
	}
	dlq := base.Namespace + "tori.dead-letter"
	eventually(t, 20*time.Second, "three forgeries dead-lettered", func() bool { return queueDepth(t, dlq) == 3 })
	ch := rawChannel(t)
	for range 3 {
		d, ok, err := ch.Get(dlq, false)
		if err != nil || !ok {
			t.Fatalf("get dead letter: %v %v", ok, err)
		}
		if r, _ := d.Headers["x-tori-reason"].(string); !strings.Contains(r, "does not own routing key") {
			t.Errorf("dead letter %v: reason %q", d.Headers["x-tori-routing-key"], r)
		}
	}

	// Borrowing apps's user_id is refused by the broker itself.
	closed := logs.NotifyClose(make(chan *amqp.Error, 1))
	forge(base.Namespace+"tori.events", "apps.thing.borrowed", amqp.Publishing{UserId: bus.UserName("test.", bus.PrincipalApps)})
	select {
	case e := <-closed:
		if e == nil || e.Code != amqp.PreconditionFailed {
			t.Fatalf("publishing under apps's user_id: channel closed with %v, want precondition failed", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broker let logs publish under apps's user_id")
	}
}

// A dead letter replayed by the operator reaches its consumer as its original publisher's,
// and is handled; a replay by a user that may not impersonate fails and moves nothing.
func TestReplayKeepsThePublisher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	base := testConfig(t)
	apps := testinfra.DialBusAs(t, base, bus.PrincipalApps, testLogger())
	deploys := testinfra.DialBusAs(t, base, bus.PrincipalDeploys, testLogger())
	run(t, "relay as apps", bus.NewRelay(apps, pool, nil).Run)

	var fixed sync.Once
	fixedNow := make(chan struct{})
	var h heard
	ready := newReadiness()
	run(t, "consume as deploys", func(ctx context.Context) error {
		return deploys.Consume(ctx, pool, bus.Subscription{Ready: ready.fire, Queue: "deploys.replayed", Keys: []string{"apps.thing.*"},
			Handle: func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
				select {
				case <-fixedNow:
					h.add(d)
					return nil
				default:
					return bus.Permanent(errors.New("not yet"))
				}
			}})
	})
	ready.wait(t)
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		return bus.Publish(ctx, tx, "apps.thing.happened", &busv1.TestEvent{Seq: 1, Payload: "again"})
	}); err != nil {
		t.Fatal(err)
	}
	dlq := base.Namespace + "tori.dead-letter"
	eventually(t, 20*time.Second, "the event dead-lettered", func() bool { return queueDepth(t, dlq) == 1 })
	fixed.Do(func() { close(fixedNow) })

	// guest is an administrator but no impersonator: the broker refuses the borrowed user_id.
	if n, err := dial(t, base).ReplayDeadLetters(ctx, 10); err == nil || n != 0 {
		t.Fatalf("replay without the impersonator tag: %d, %v; want an error and nothing moved", n, err)
	}
	eventually(t, 10*time.Second, "the dead letter still parked", func() bool { return queueDepth(t, dlq) == 1 })

	operator := testinfra.DialBusAs(t, base, bus.PrincipalOperator, testLogger())
	if n, err := operator.ReplayDeadLetters(ctx, 10); err != nil || n != 1 {
		t.Fatalf("operator replay: %d, %v; want 1", n, err)
	}
	eventually(t, 20*time.Second, "the replayed event handled", func() bool { return len(h.payloads()) == 1 })
	if got := h.payloads()[0]; got != "again from apps" {
		t.Fatalf("handled %q", got)
	}
}

// A listener, like a consumer, hears a key only from its owner.
func TestListenerHearsOnlyTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	base := testConfig(t)
	identity := testinfra.DialBusAs(t, base, bus.PrincipalIdentity, testLogger())
	gateway := testinfra.DialBusAs(t, base, bus.PrincipalGateway, testLogger())
	run(t, "relay as identity", bus.NewRelay(identity, pool, nil).Run)
	var h heard
	run(t, "listen as gateway", func(ctx context.Context) error {
		return gateway.Listen(ctx, []string{"identity.token.*"}, func(ctx context.Context, d bus.Delivery) error { h.add(d); return nil })
	})
	// The listener's queue is bound once a first event arrives; until then, publish probes.
	publish := func(payload string) {
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			return bus.Publish(ctx, tx, "identity.token.revoked", &busv1.TestEvent{Payload: payload})
		}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "the listener bound", func() bool {
		publish("probe")
		time.Sleep(50 * time.Millisecond)
		return len(h.payloads()) > 0
	})
	billing := rawAs(t, bus.PrincipalBilling)
	body, _ := proto.Marshal(&busv1.TestEvent{Payload: "forged"})
	if err := billing.PublishWithContext(ctx, base.Namespace+"tori.events", "identity.token.revoked", false, false, amqp.Publishing{
		MessageId: uuid.NewString(), UserId: bus.UserName("test.", bus.PrincipalBilling), Body: body}); err != nil {
		t.Fatal(err)
	}
	publish("marker")
	eventually(t, 20*time.Second, "the marker heard", func() bool {
		p := h.payloads()
		return len(p) > 0 && p[len(p)-1] == "marker from identity"
	})
	for _, p := range h.payloads() {
		if p != "probe from identity" && p != "marker from identity" {
			t.Fatalf("listener heard %q", p)
		}
	}
}

// A responder learns who asks; requests from no principal are refused, and OnlyFrom narrows
// who may ask.
func TestRespondersKnowWhoAsks(t *testing.T) {
	t.Parallel()
	base := testConfig(t)
	apps := testinfra.DialBusAs(t, base, bus.PrincipalApps, testLogger())
	who := func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		return &busv1.TestReply{Answer: d.Publisher}, nil
	}
	run(t, "serve any", func(ctx context.Context) error { return apps.Serve(ctx, "apps.rpc.who", who) })
	run(t, "serve zones", func(ctx context.Context) error {
		return apps.Serve(ctx, "apps.rpc.zones_only", bus.OnlyFrom(bus.IsZone, who))
	})
	waitQueue(t, base.Namespace+"apps.rpc.who")
	waitQueue(t, base.Namespace+"apps.rpc.zones_only")

	zone := testinfra.DialBusAs(t, base, bus.ZonePrincipal("local"), testLogger())
	deploys := testinfra.DialBusAs(t, base, bus.PrincipalDeploys, testLogger())
	guest := dial(t, base)
	cases := []struct {
		name  string
		from  *bus.Conn
		queue string
		want  string // the answer, or the refusal's code
	}{
		{"a service asks", deploys, "apps.rpc.who", "deploys"},
		{"a zone asks", zone, "apps.rpc.who", "zone.local"},
		{"no principal asks", guest, "apps.rpc.who", "forbidden"},
		{"a zone asks a zones-only question", zone, "apps.rpc.zones_only", "zone.local"},
		{"a service asks a zones-only question", deploys, "apps.rpc.zones_only", "forbidden"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reply busv1.TestReply
			err := c.from.Request(context.Background(), c.queue, &busv1.TestRequest{Question: "who?"}, &reply)
			var re *bus.RemoteError
			got := reply.Answer
			if errors.As(err, &re) {
				got = re.Code
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Every id a message carries must be a UUID before a handler sees it: the zone joins them
// into paths, the services into queries.
func TestDecodeRefusesIDsThatAreNotUUIDs(t *testing.T) {
	good := uuid.NewString()
	cases := []struct {
		name string
		msg  proto.Message
		ok   bool
	}{
		{"uuids", &zonev1.StartRevision{DeployId: good, AppId: good, EnvDeployId: good}, true},
		{"unset ids", &zonev1.DiscardRevision{}, true},
		{"a path in an id", &zonev1.StartRevision{DeployId: "../../../etc", AppId: good}, false},
		{"an app id with a slash", &zonev1.DiscardRevision{DeployId: good, AppId: good + "/x"}, false},
		{"uuid without dashes", &zonev1.DiscardRevision{DeployId: strings.ReplaceAll(good, "-", "")}, false},
		{"braced uuid", &zonev1.DiscardRevision{DeployId: "{" + good + "}"}, false},
		{"a key id is no uuid", &appsv1.EnvOpenRequest{AppId: good, DeployId: good, KeyId: "local-1"}, true},
		// A preview's id is 6 base-36 characters; its consumer checks it (names.ValidPreviewID).
		{"a preview id is no uuid", &zonev1.RemovePreview{AppId: good, PreviewId: "abc123"}, true},
		{"a bad app id beside a preview id", &zonev1.RemovePreview{AppId: "x", PreviewId: "abc123"}, false},
		{"an id inside a list", &logsv1.LogBatch{Entries: []*logsv1.LogEntry{{AppId: good}, {AppId: "nope"}}}, false},
		// A map of strings has no ids to check (it used to panic reading its values as messages).
		{"a map of strings", &auditv1.EntryRecorded{EntryId: good, TeamId: good, Metadata: map[string]string{"keys": "A,B"}}, true},
		{"a bad id beside a map", &auditv1.EntryRecorded{EntryId: "x", Metadata: map[string]string{"keys": "A"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := proto.Marshal(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			into := c.msg.ProtoReflect().New().Interface()
			err = bus.Delivery{Body: body}.Decode(into)
			if (err == nil) != c.ok {
				t.Fatalf("Decode: %v, want ok=%v", err, c.ok)
			}
		})
	}
}
