package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

var ctx = context.Background()

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
}

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return store.New(newPool(t))
}

func at(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

func insert(t *testing.T, s *store.Store, a accounts.Account) bool {
	t.Helper()
	var inserted bool
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		var err error
		inserted, err = tx.InsertAccount(ctx, a)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return inserted
}

func lock(s *store.Store, ref accounts.Ref) (accounts.Account, error) {
	var a accounts.Account
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		var err error
		a, err = tx.LockAccount(ctx, ref)
		return err
	})
	return a, err
}

func TestInsertAccountOnceAndReadItBack(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := accounts.New(uuid.Must(uuid.NewV7()), "Ada@Example.com", at(100))
	if !insert(t, s, a) {
		t.Fatal("first insert reported the account as existing")
	}
	got, err := s.Account(ctx, a.ID)
	if err != nil || got != a {
		t.Fatalf("read back %+v, %v; want %+v", got, err, a)
	}

	// A repeat (a redelivered account.created) leaves the record alone, even after a change.
	moved, _ := a.ChangePlan(catalog.Flock, at(200))
	if err := s.InTx(ctx, func(tx usecase.Tx) error { return tx.UpdateAccount(ctx, moved) }); err != nil {
		t.Fatal(err)
	}
	if insert(t, s, accounts.New(a.ID, "other@example.com", at(300))) {
		t.Fatal("second insert reported a new account")
	}
	got, err = s.Account(ctx, a.ID)
	if err != nil || got != moved {
		t.Fatalf("after repeat insert: %+v, %v; want %+v", got, err, moved)
	}
}

func TestUnknownAccountIsNotFound(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	id := uuid.Must(uuid.NewV7())
	if _, err := s.Account(ctx, id); !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("Account: %v, want ErrNotFound", err)
	}
	if _, err := lock(s, accounts.Ref{ID: id}); !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("LockAccount by id: %v, want ErrNotFound", err)
	}
	if _, err := lock(s, accounts.Ref{Email: "nobody@example.com"}); !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("LockAccount by email: %v, want ErrNotFound", err)
	}
	err := s.InTx(ctx, func(tx usecase.Tx) error { return tx.UpdateAccount(ctx, accounts.New(id, "", at(1))) })
	if !errors.Is(err, accounts.ErrNotFound) {
		t.Fatalf("UpdateAccount: %v, want ErrNotFound", err)
	}
}

func TestLockAccountByIDOrEmail(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ada := accounts.New(uuid.Must(uuid.NewV7()), "Ada@Example.com", at(1))
	insert(t, s, ada)
	// Two accounts with one address: an operator naming that address must be told, not
	// handed one of them at random.
	insert(t, s, accounts.New(uuid.Must(uuid.NewV7()), "twin@example.com", at(1)))
	insert(t, s, accounts.New(uuid.Must(uuid.NewV7()), "TWIN@example.com", at(1)))

	cases := []struct {
		name string
		ref  accounts.Ref
		want accounts.Account
		err  error
	}{
		{"by id", accounts.Ref{ID: ada.ID}, ada, nil},
		{"by email", accounts.Ref{Email: "Ada@Example.com"}, ada, nil},
		{"by email in another case", accounts.Ref{Email: "ada@example.COM"}, ada, nil},
		{"by shared email", accounts.Ref{Email: "twin@example.com"}, accounts.Account{}, accounts.ErrAmbiguous},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lock(s, tc.ref)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestLockAccountSerializesWriters(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	s := store.New(pool)
	a := accounts.New(uuid.Must(uuid.NewV7()), "ada@example.com", at(1))
	insert(t, s, a)

	locked := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx usecase.Tx) error {
			if _, err := tx.LockAccount(ctx, accounts.Ref{ID: a.ID}); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	second := make(chan error, 1)
	go func() {
		_, err := lock(s, accounts.Ref{ID: a.ID})
		second <- err
	}()
	// Postgres itself says when the second writer waits for the first one's row lock; until
	// the first lets go, the second must not have its answer.
	testinfra.Eventually(t, 10*time.Second, "the second writer to wait for the row lock", func() bool {
		var waiting int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting == 1
	})
	select {
	case err := <-second:
		t.Fatalf("a second writer got the row while the first held it (err %v)", err)
	default:
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

func TestPlanColumnAcceptsOnlyCatalogPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := accounts.New(uuid.Must(uuid.NewV7()), "", at(1))
	a.Plan = "eagle"
	err := s.InTx(ctx, func(tx usecase.Tx) error { _, err := tx.InsertAccount(ctx, a); return err })
	if err == nil {
		t.Fatal("stored an account on a plan the catalog does not have")
	}
}

func TestUnsentEventsCountsOnlyUnsentOutboxRows(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	s := store.New(pool)
	for i, sent := range []bool{false, true, false} {
		_, err := pool.Exec(ctx, `INSERT INTO outbox (id, routing_key, type, body, sent_at)
			VALUES ($1, 'billing.account.plan_changed', 't', '\x00', CASE WHEN $2 THEN now() END)`,
			uuid.Must(uuid.NewV7()), sent)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	n, err := s.UnsentEvents(ctx)
	if err != nil || n != 2 {
		t.Fatalf("UnsentEvents = %d, %v; want 2", n, err)
	}
}
