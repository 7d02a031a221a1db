package operator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/billing"
	"tori.dev/services/billing/internal/bustest"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/operator"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/store/storetest"
)

func register(ctx context.Context, st *store.Store, svc *billing.Service, id uuid.UUID, email string) error {
	return st.InTx(ctx, func(tx pgx.Tx) error { return svc.RegisterAccount(ctx, tx, id, email) })
}

// A script that has just signed an account up may set its plan before account.created has
// reached billing: the command waits for it.
func TestSetPlanWaitsForTheAccountToArrive(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := store.New(storetest.NewPool(t))
	svc := billing.NewService(st, bus.Publish)
	id := uuid.Must(uuid.NewV7())

	arrived := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		arrived <- register(ctx, st, svc, id, "ada@example.com")
	}()
	a, changed, err := operator.SetPlan(ctx, svc, accounts.Ref{Email: "ada@example.com"}, "flock")
	if err != nil || !changed || a.ID != id || a.Plan != catalog.Flock || a.Version != 2 {
		t.Fatalf("SetPlan = %+v, %v, %v", a, changed, err)
	}
	if err := <-arrived; err != nil {
		t.Fatal(err)
	}
}

func TestSetPlanGivesUpOnAnAccountThatNeverArrives(t *testing.T) {
	t.Parallel()
	svc := billing.NewService(store.New(storetest.NewPool(t)), bus.Publish)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, err := operator.SetPlan(ctx, svc, accounts.Ref{ID: uuid.Must(uuid.NewV7())}, "flock")
	if !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
}

// Flush publishes what the command wrote even with no billing service running.
func TestFlushPublishesEveryPendingEvent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := storetest.NewPool(t)
	st := store.New(pool)
	svc := billing.NewService(st, bus.Publish)
	id := uuid.Must(uuid.NewV7())
	if err := register(ctx, st, svc, id, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "songbird"); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.UnsentEvents(ctx); n != 2 {
		t.Fatalf("%d unsent events before the flush, want 2", n)
	}
	conn := bustest.Dial(t, bustest.Config(t))
	if err := operator.Flush(ctx, conn, pool, st, bustest.Log()); err != nil {
		t.Fatal(err)
	}
	if n, err := st.UnsentEvents(ctx); err != nil || n != 0 {
		t.Fatalf("%d unsent events after the flush (%v)", n, err)
	}
}

func TestFlushGivesUpAtItsDeadline(t *testing.T) {
	t.Parallel()
	pool := storetest.NewPool(t)
	conn := bustest.Dial(t, bustest.Config(t))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := operator.Flush(ctx, conn, pool, stuckOutbox{}, bustest.Log())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
}

// stuckOutbox always has an event left, as when the broker refuses everything.
type stuckOutbox struct{}

func (stuckOutbox) UnsentEvents(context.Context) (int64, error) { return 1, nil }
