package logstest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// BusConfig is testinfra's bus configuration with the logs tests' retry settings.
func BusConfig(t testing.TB) bus.Config {
	t.Helper()
	cfg := testinfra.BusConfig(t)
	cfg.MaxAttempts = 5
	cfg.BaseBackoff = 50 * time.Millisecond
	return cfg
}

// BusConfigOf is the bus configuration of a service's environment (testinfra.Running.Env),
// so a test talks to the bus namespace the service uses.
func BusConfigOf(t testing.TB, env map[string]string) bus.Config {
	t.Helper()
	var cfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, env); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Publisher stands in for one service that publishes what the logs service consumes (a
// zone agent, apps, billing): an outbox in a schema of its own and a relay connected as that
// principal's broker user, so the logs service takes its events as the owner's.
type Publisher struct {
	Pool *pgxpool.Pool
	Conn *bus.Conn
}

// ZonePrincipal is the principal of the zone whose log batches the tests publish.
var ZonePrincipal = bus.ZonePrincipal("local")

// NewPublisher sets up principal's outbox in the database at adminURL and runs its relay
// until the test ends.
func NewPublisher(t testing.TB, adminURL string, cfg bus.Config, principal string) *Publisher {
	t.Helper()
	ctx := context.Background()
	name := "publisher_" + strings.ReplaceAll(principal, ".", "_")
	svc := pgstore.Service{Schema: name, Role: "tori_test_" + name}
	pool, err := pgstore.Setup(ctx, adminURL, svc, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn := testinfra.DialBusAs(t, cfg, principal, quiet)
	testinfra.Background(t, "publisher relay", bus.NewRelay(conn, pool, quiet).Run)
	return &Publisher{Pool: pool, Conn: conn}
}

// Publish puts one event in the outbox and returns its outbox id.
func (p *Publisher) Publish(t testing.TB, key string, m proto.Message) string {
	t.Helper()
	var id string
	err := pgstore.InTx(context.Background(), p.Pool, func(tx pgx.Tx) error {
		if err := bus.Publish(context.Background(), tx, key, m); err != nil {
			return err
		}
		return tx.QueryRow(context.Background(), `SELECT id::text FROM outbox WHERE seq = currval(pg_get_serial_sequence('outbox', 'seq'))`).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Batch builds a zone's batch of n stdout lines of app, stamped now.
func Batch(app string, n int, prefix string) *logsv1.LogBatch {
	b := &logsv1.LogBatch{Entries: make([]*logsv1.LogEntry, n)}
	now := timestamppb.Now()
	for i := range b.Entries {
		b.Entries[i] = &logsv1.LogEntry{AppId: app, Stream: "stdout", Timestamp: now, Message: prefix}
	}
	return b
}

// AwaitIngest publishes single-line batches of a probe app until one is stored: the ingest
// queue is declared by the consumer once it runs, and the broker drops what is published
// before a queue is bound.
func AwaitIngest(t testing.TB, p *Publisher, db *DB) {
	t.Helper()
	probe := uuid.NewString()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		p.Publish(t, zonebus.KeyLogBatch, Batch(probe, 1, "probe"))
		for range 10 {
			if db.Count(t, probe) > 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Fatal("the logs service never stored a probe batch")
}
