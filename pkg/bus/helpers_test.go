package bus_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// The tests' service: its own schema and role, the bus's tables plus an effects table in which
// each consumed event leaves one row per effect (no unique key, so a second effect would show).
var (
	testService    = pgstore.Service{Schema: "bustest", Role: "tori_test_bus"}
	testMigrations = pgstore.MigrationSet{Name: "bustest", FS: fstest.MapFS{
		"001_effects.sql": {Data: []byte(`
			CREATE TABLE effects (
				id         bigserial PRIMARY KEY,
				consumer   text   NOT NULL,
				seq        bigint NOT NULL,
				message_id text   NOT NULL
			);
			CREATE INDEX effects_seq ON effects (consumer, seq);`)},
	}}
)

// newPool gives the test a database of its own with the migrations applied, connected as the
// service's role.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	fp, err := pgstore.Fingerprint(bus.Migrations, testMigrations)
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "bus_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := pgstore.Setup(ctx, adminURL, testService, pgstore.WithMigrations(bus.Migrations, testMigrations))
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgstore.Setup(ctx, admin, testService, pgstore.WithMigrations(bus.Migrations, testMigrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// testConfig is a bus configuration with a namespace of the test's own.
func testConfig(t testing.TB) bus.Config { return testinfra.BusConfig(t) }

// viaProxy routes cfg through a proxy the test controls.
func viaProxy(t testing.TB, cfg bus.Config) (bus.Config, *testinfra.Proxy) {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := testinfra.NewProxy(t, u.Host)
	u.Host = p.Addr()
	cfg.URL = u.String()
	return cfg, p
}

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("BUS_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// dial connects and, when the test ends, closes the connection and removes the exchanges
// (queues expire by themselves, but exchanges do not).
func dial(t testing.TB, cfg bus.Config) *bus.Conn {
	t.Helper()
	return testinfra.DialBus(t, cfg, testLogger())
}

// rawChannel is a plain amqp091 channel on the test broker, for looking behind the package.
func rawChannel(t testing.TB) *amqp.Channel {
	t.Helper()
	ac, err := amqp.Dial(testinfra.AMQPURL(t))
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

// rawEvent is a TestEvent as the relay would publish it, for tests that go behind its back.
func rawEvent(t testing.TB, id string, seq int64, headers amqp.Table) amqp.Publishing {
	t.Helper()
	body, err := proto.Marshal(&busv1.TestEvent{Seq: seq, Payload: fmt.Sprintf("raw %d", seq)})
	if err != nil {
		t.Fatal(err)
	}
	return amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		MessageId:    id,
		Type:         "tori.bus.v1.TestEvent",
		Headers:      headers,
		Body:         body,
	}
}

// queueDepth is the number of ready messages in a queue, or -1 when it does not exist.
func queueDepth(t testing.TB, name string) int {
	t.Helper()
	ch := rawChannel(t)
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
	if err != nil {
		return -1
	}
	return q.Messages
}

// waitQueue waits until the broker has a queue of that name: events published before a
// consumer's queue is bound go nowhere.
// readiness is a Subscription.Ready a test can wait on: publishing before the consumer's
// bindings exist would route the events nowhere.
type readiness chan struct{}

func newReadiness() readiness { return make(readiness, 1) }

func (r readiness) fire() {
	select {
	case r <- struct{}{}:
	default:
	}
}

func (r readiness) wait(t testing.TB) {
	t.Helper()
	select {
	case <-r:
	case <-time.After(20 * time.Second):
		t.Fatal("subscription not ready after 20s")
	}
}

func waitQueue(t testing.TB, name string) {
	t.Helper()
	eventually(t, 20*time.Second, "queue "+name+" declared", func() bool { return queueDepth(t, name) >= 0 })
}

func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testinfra.Eventually(t, within, what, cond)
}

// run starts fn in the background until the test ends (testinfra.Background).
func run(t testing.TB, name string, fn func(ctx context.Context) error) {
	t.Helper()
	testinfra.Background(t, name, fn)
}

// publishEvents writes n TestEvents (seq from..from+n-1) through the outbox in transactions of
// perTx.
func publishEvents(ctx context.Context, pool *pgxpool.Pool, key string, from, n, perTx int) error {
	for start := from; start < from+n; start += perTx {
		end := min(start+perTx, from+n)
		err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			for seq := start; seq < end; seq++ {
				ev := &busv1.TestEvent{Seq: int64(seq), Payload: fmt.Sprintf("event %d", seq), SentUnixNanos: time.Now().UnixNano()}
				if err := bus.Publish(ctx, tx, key, ev); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recordEffect is a handler whose effect is one row in effects, in the handler's transaction.
func recordEffect(consumer string, calls *atomic.Int64) bus.TxHandler {
	return func(ctx context.Context, btx bus.Tx, d bus.Delivery) error {
		tx := btx.Pgx()
		if calls != nil {
			calls.Add(1)
		}
		var ev busv1.TestEvent
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO effects (consumer, seq, message_id) VALUES ($1, $2, $3)`, consumer, ev.Seq, d.ID)
		return err
	}
}

func countEffects(t testing.TB, pool *pgxpool.Pool, consumer string) (total, distinct int) {
	t.Helper()
	err := pool.QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT seq) FROM effects WHERE consumer = $1`, consumer).Scan(&total, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	return total, distinct
}

// stoppable starts fn like run, and returns a stop that cancels it and waits until it has
// returned. A consumer that has returned holds no delivery: each one it had is acknowledged
// or back in its queue. So after stop, an empty queue proves that every copy was settled and
// no late one can still act, without sleeping for a moment and hoping.
func stoppable(t testing.TB, name string, fn func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("%s did not stop", name)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// consumer is a Consume (or any part) that a test stops and starts again.
type consumer struct {
	t    testing.TB
	fn   func(ctx context.Context) error
	stop func()
}

func startConsumer(t testing.TB, fn func(ctx context.Context) error) *consumer {
	t.Helper()
	c := &consumer{t: t, fn: fn}
	c.start()
	return c
}

func (c *consumer) start() { c.stop = stoppable(c.t, "consume", c.fn) }

// settle stops the consumer and checks that its queue holds nothing: every delivery it was
// given has been acknowledged, so the effects counted next are final. A delivery still being
// handled when it stopped goes back to the queue; then the consumer runs again until the
// queue is empty and stops again, until a stop leaves nothing behind.
func (c *consumer) settle(queue string) {
	c.t.Helper()
	for round := 1; ; round++ {
		c.stop()
		if queueDepth(c.t, queue) == 0 {
			return
		}
		if round == 10 {
			c.t.Fatalf("queue %s still holds messages after %d stops of its consumer", queue, round)
		}
		c.start()
		eventually(c.t, 20*time.Second, "returned deliveries taken again", func() bool { return queueDepth(c.t, queue) == 0 })
	}
}
