package busapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/usecase"
)

// FlushOutbox publishes what the command wrote even with no billing service running.
func TestFlushOutboxPublishesEveryPendingEvent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc, st, pool := newService(t)
	id := uuid.Must(uuid.NewV7())
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterAccount(ctx, tx, id, "ada@example.com") }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "songbird"); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.UnsentEvents(ctx); n != 2 {
		t.Fatalf("%d unsent events before the flush, want 2", n)
	}
	conn := testinfra.DialBus(t, testinfra.BusConfig(t), quiet)
	if err := busapi.FlushOutbox(ctx, conn, pool, st, quiet); err != nil {
		t.Fatal(err)
	}
	if n, err := st.UnsentEvents(ctx); err != nil || n != 0 {
		t.Fatalf("%d unsent events after the flush (%v)", n, err)
	}
}

func TestFlushOutboxGivesUpAtItsDeadline(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	conn := testinfra.DialBus(t, testinfra.BusConfig(t), quiet)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := busapi.FlushOutbox(ctx, conn, pool, stuckOutbox{}, quiet)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
}

// stuckOutbox always has an event left, as when the broker refuses everything.
type stuckOutbox struct{}

func (stuckOutbox) UnsentEvents(context.Context) (int64, error) { return 1, nil }
