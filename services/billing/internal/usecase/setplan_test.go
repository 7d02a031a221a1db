package usecase_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

// missWatcher is the real store telling when a plan change first found no account, so a test
// can let the account arrive after that, and only after that.
type missWatcher struct {
	usecase.Store
	once   sync.Once
	missed chan struct{}
}

func (s *missWatcher) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return s.Store.InTx(ctx, func(tx usecase.Tx) error { return fn(missTx{tx, s}) })
}

type missTx struct {
	usecase.Tx
	s *missWatcher
}

func (tx missTx) LockAccount(ctx context.Context, ref accounts.Ref) (accounts.Account, error) {
	a, err := tx.Tx.LockAccount(ctx, ref)
	if errors.Is(err, accounts.ErrNotFound) {
		tx.s.once.Do(func() { close(tx.s.missed) })
	}
	return a, err
}

// A script that has just signed an account up may set its plan before account.created has
// reached billing: the operator's plan change waits for it.
func TestSetPlanWhenRecordedWaitsForTheAccountToArrive(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := &missWatcher{Store: store.New(newPool(t)), missed: make(chan struct{})}
	svc := usecase.New(st)
	id := uuid.Must(uuid.NewV7())

	arrived := make(chan error, 1)
	go func() {
		select {
		case <-st.missed:
		case <-ctx.Done():
			arrived <- ctx.Err()
			return
		}
		arrived <- st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterAccount(ctx, tx, id, "ada@example.com") })
	}()
	a, changed, err := svc.SetPlanWhenRecorded(ctx, accounts.Ref{Email: "ada@example.com"}, "flock")
	if err != nil || !changed || a.ID != id || a.Plan != catalog.Flock || a.Version != 2 {
		t.Fatalf("SetPlanWhenRecorded = %+v, %v, %v", a, changed, err)
	}
	if err := <-arrived; err != nil {
		t.Fatal(err)
	}
}

func TestSetPlanWhenRecordedGivesUpOnAnAccountThatNeverArrives(t *testing.T) {
	t.Parallel()
	svc := usecase.New(store.New(newPool(t)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, err := svc.SetPlanWhenRecorded(ctx, accounts.Ref{ID: uuid.Must(uuid.NewV7())}, "flock")
	if !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
}
