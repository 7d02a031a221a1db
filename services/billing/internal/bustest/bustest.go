// Package bustest connects tests to the real broker testinfra names, in a namespace of the
// test's own, and stands in for identity where a test needs its events.
package bustest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// Config is a bus configuration for one test (testinfra.BusConfig).
func Config(t testing.TB) bus.Config {
	t.Helper()
	return testinfra.BusConfig(t)
}

// Log discards; tests look at effects, not log lines.
func Log() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Dial connects with cfg; the connection closes when the test ends.
func Dial(t testing.TB, cfg bus.Config) *bus.Conn {
	t.Helper()
	return testinfra.DialBus(t, cfg, Log())
}

// Group runs a test's background bus work (relays, consumers, responders) and, when the test
// ends, stops it and waits for it before the pools and connection it uses close.
type Group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewGroup starts an empty group.
func NewGroup() *Group {
	ctx, cancel := context.WithCancel(context.Background())
	return &Group{ctx: ctx, cancel: cancel}
}

// Go runs fn until the test ends; an error while the test still runs fails it.
func (g *Group) Go(t testing.TB, name string, fn func(ctx context.Context) error) {
	// Cleanups run last-registered first. Registering here, after the pools and connection
	// fn uses were opened (and their closing registered), stops fn before they close: a pool
	// waits for its connections on Close, so the other order would hang.
	t.Cleanup(func() { g.cancel(); g.wg.Wait() })
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(g.ctx); err != nil && g.ctx.Err() == nil {
			t.Errorf("%s: %v", name, err)
		}
	}()
}

// Identity plays the identity service: a schema with an outbox of its own in the test's
// database, and a relay publishing from it.
type Identity struct {
	pool *pgxpool.Pool
}

// StartIdentity sets up the stand-in in the database adminURL names and relays its outbox on
// conn until the test ends.
func StartIdentity(t testing.TB, g *Group, conn *bus.Conn, adminURL string) *Identity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc := pgstore.Service{Schema: "identity_standin", Role: "tori_billing_test_identity"}
	pool, err := pgstore.Setup(ctx, adminURL, svc, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	relay := bus.NewRelay(conn, pool, Log())
	g.Go(t, "identity relay", relay.Run)
	return &Identity{pool: pool}
}

// Publish sends msg as identity would: through its outbox.
func (id *Identity) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return pgstore.InTx(ctx, id.pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, routingKey, msg) })
}
