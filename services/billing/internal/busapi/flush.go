package busapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
)

// flushPollEvery is how often FlushOutbox counts what is left.
const flushPollEvery = 100 * time.Millisecond

// Outbox counts the events not yet published; *store.Store is one.
type Outbox interface {
	UnsentEvents(ctx context.Context) (int64, error)
}

// FlushOutbox runs a relay until every committed event of billing's outbox is published, or
// ctx ends: the operator command publishes what it wrote whether or not a billing service
// runs. A running service's relay may take some of the rows; that is fine, the command only
// waits for none to be left.
func FlushOutbox(ctx context.Context, conn *bus.Conn, pool *pgxpool.Pool, outbox Outbox, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relayDone := make(chan error, 1)
	go func() { relayDone <- bus.NewRelay(conn, pool, log).Run(ctx) }()
	stopRelay := func() { cancel(); <-relayDone }

	for {
		n, err := outbox.UnsentEvents(ctx)
		if err != nil {
			stopRelay()
			return err
		}
		if n == 0 {
			stopRelay()
			return nil
		}
		select {
		case <-ctx.Done():
			stopRelay()
			return fmt.Errorf("%d event(s) still unpublished: %w", n, ctx.Err())
		case err := <-relayDone:
			return fmt.Errorf("relay stopped with %d event(s) unpublished: %w", n, err)
		case <-time.After(flushPollEvery):
		}
	}
}
