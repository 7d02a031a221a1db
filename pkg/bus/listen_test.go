package bus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/bus"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// seqs collects the sequence numbers a listener saw.
type seqs struct {
	mu  sync.Mutex
	max int64
	n   int
}

func (s *seqs) listen(ctx context.Context, d bus.Delivery) error {
	var ev busv1.TestEvent
	if err := d.Decode(&ev); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.max = max(s.max, ev.Seq)
	return nil
}

func (s *seqs) seen() (n int, max int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.max
}

// Two listeners (two instances of a service) each receive every event; one of them comes
// back after its connection drops, on a fresh queue.
func TestListenersEachReceiveEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t)
	connA := dial(t, cfg)
	cfgB, proxy := viaProxy(t, cfg)
	connB := dial(t, cfgB)
	var a, b seqs
	run(t, "relay", bus.NewRelay(connA, pool, nil).Run)
	run(t, "listen a", func(ctx context.Context) error { return connA.Listen(ctx, []string{"test.listen.*"}, a.listen) })
	run(t, "listen b", func(ctx context.Context) error { return connB.Listen(ctx, []string{"test.listen.*"}, b.listen) })

	// Listener queues are server-named, so there is nothing to wait for but the events
	// themselves: publish until both have one past since.
	seq := 0
	publishUntil := func(what string, since int64) {
		t.Helper()
		eventually(t, 15*time.Second, what, func() bool {
			seq++
			if err := publishEvents(ctx, pool, "test.listen.event", seq, 1, 1); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			_, ma := a.seen()
			_, mb := b.seen()
			return ma > since && mb > since
		})
	}
	publishUntil("both listeners receive", 0)

	proxy.Down()
	eventually(t, 5*time.Second, "B disconnected", func() bool { return !connB.Connected() })
	proxy.Up()
	eventually(t, 10*time.Second, "B reconnected", connB.Connected)
	publishUntil("both listeners receive after B's reconnect", int64(seq))
}
