// Package operator holds the work behind billing's operator commands, which run the same
// use cases as the service from a short-lived process.
package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/billing"
)

// pollEvery is how often the commands look again at something they wait for.
const pollEvery = 100 * time.Millisecond

// SetPlan moves the account ref names to plan. An account billing has not recorded yet is
// waited for until ctx ends: a test or script that has just signed up an account may call
// this before identity's account.created has reached billing.
func SetPlan(ctx context.Context, svc *billing.Service, ref accounts.Ref, plan string) (accounts.Account, bool, error) {
	missing := false
	for {
		a, changed, err := svc.SetPlan(ctx, ref, plan)
		switch {
		case errors.Is(err, accounts.ErrNotFound):
			missing = true
		case missing && ctx.Err() != nil:
			// The deadline passed during a retry: what went wrong is still the missing account.
		default:
			return a, changed, err
		}
		select {
		case <-ctx.Done():
			return accounts.Account{}, false, fmt.Errorf("%w: no account %s reached billing in time", accounts.ErrNotFound, ref)
		case <-time.After(pollEvery):
		}
	}
}

// Outbox counts the events not yet published; *store.Store is one.
type Outbox interface {
	UnsentEvents(ctx context.Context) (int64, error)
}

// Flush runs a relay until every committed event of billing's outbox is published, or ctx
// ends. A running billing service's relay may take some of the rows; that is fine, the
// command only waits for none to be left.
func Flush(ctx context.Context, conn *bus.Conn, pool *pgxpool.Pool, outbox Outbox, log *slog.Logger) error {
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
		case <-time.After(pollEvery):
		}
	}
}
