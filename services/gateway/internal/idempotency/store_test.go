package idempotency

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// clockedStore is a store with a way to move one key's time: lapse makes its lease run out,
// age puts it past the TTL.
type clockedStore struct {
	Store
	lapse func(t *testing.T, keyHash []byte)
	age   func(t *testing.T, keyHash []byte)
}

func memoryStore(t *testing.T) clockedStore {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	m := NewMemory(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	move := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	return clockedStore{Store: m,
		lapse: func(*testing.T, []byte) { move(Lease + time.Second) },
		age:   func(*testing.T, []byte) { move(TTL + time.Second) },
	}
}

var svc = pgstore.Service{Schema: "gateway", Role: "tori_gateway"}

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	fp, err := pgstore.Fingerprint(Migrations)
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "gateway_idem_"+fp, func(ctx context.Context, url string) error {
		pool, err := pgstore.Setup(ctx, url, svc, pgstore.WithMigrations(Migrations))
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	pool, err := pgstore.Setup(ctx, admin, svc, pgstore.WithMigrations(Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func postgresStore(t *testing.T) clockedStore {
	pool := newPool(t)
	exec := func(t *testing.T, sql string, keyHash []byte) {
		if _, err := pool.Exec(context.Background(), sql, keyHash); err != nil {
			t.Fatal(err)
		}
	}
	return clockedStore{Store: NewPostgres(pool),
		lapse: func(t *testing.T, k []byte) {
			exec(t, `UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key_hash = $1`, k)
		},
		age: func(t *testing.T, k []byte) {
			exec(t, `UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE key_hash = $1`, k)
		},
	}
}

func TestStores(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) clockedStore{"memory": memoryStore, "postgres": postgresStore} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storeContract(t, mk(t))
		})
	}
}

func storeContract(t *testing.T, s clockedStore) {
	ctx := context.Background()
	answer := Answer{RequestHash: []byte("req"), Status: 201, ContentType: "application/json", Body: []byte(`{"id":"x"}`)}

	k := KeyHash("account:a", "one")
	c, ok, _, err := s.Claim(ctx, k, Lease)
	if err != nil || !ok {
		t.Fatalf("a new key: ok %v err %v", ok, err)
	}
	if _, ok, rec, err := s.Claim(ctx, k, Lease); err != nil || ok || !rec.Running {
		t.Fatalf("a held key: ok %v rec %+v err %v", ok, rec, err)
	}
	if err := s.Renew(ctx, c, Lease); err != nil {
		t.Fatal(err)
	}
	stranger := Claim{KeyHash: k, Owner: []byte("someone else")}
	if err := s.Finish(ctx, stranger, answer); !errors.Is(err, ErrLost) {
		t.Fatalf("finish by another: %v", err)
	}
	if err := s.Release(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, c, answer); err != nil {
		t.Fatal(err)
	}
	_, ok, rec, err := s.Claim(ctx, k, Lease)
	if err != nil || ok || rec.Running || rec.Status != 201 || rec.ContentType != "application/json" ||
		!bytes.Equal(rec.Body, answer.Body) || !bytes.Equal(rec.RequestHash, answer.RequestHash) {
		t.Fatalf("a done key: ok %v rec %+v err %v", ok, rec, err)
	}
	if err := s.Renew(ctx, c, Lease); !errors.Is(err, ErrLost) {
		t.Fatalf("renewing a done key: %v", err)
	}

	// Released after a 5xx: the key is free again.
	k2 := KeyHash("account:a", "two")
	c2, _, _, _ := s.Claim(ctx, k2, Lease)
	if err := s.Release(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := s.Claim(ctx, k2, Lease); err != nil || !ok {
		t.Fatalf("a released key: ok %v err %v", ok, err)
	}

	// A holder that died: once its lease lapses the key is taken over, and the old holder
	// can no longer write.
	k3 := KeyHash("account:a", "three")
	old, _, _, _ := s.Claim(ctx, k3, Lease)
	s.lapse(t, k3)
	if _, ok, _, err := s.Claim(ctx, k3, Lease); err != nil || !ok {
		t.Fatalf("a lapsed key: ok %v err %v", ok, err)
	}
	if err := s.Finish(ctx, old, answer); !errors.Is(err, ErrLost) {
		t.Fatalf("finish after losing the key: %v", err)
	}

	// A too-large answer is recorded as such, without a body.
	k4 := KeyHash("account:a", "four")
	c4, _, _, _ := s.Claim(ctx, k4, Lease)
	if err := s.Finish(ctx, c4, Answer{RequestHash: []byte("req"), Status: 200, TooLarge: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, rec, _ := s.Claim(ctx, k4, Lease); !rec.TooLarge || rec.Body != nil {
		t.Fatalf("too-large record %+v", rec)
	}

	// After 24 hours a key is new again, and pruning removes it.
	s.age(t, k)
	if _, ok, _, err := s.Claim(ctx, k, Lease); err != nil || !ok {
		t.Fatalf("a key past its TTL: ok %v err %v", ok, err)
	}
	s.age(t, k4)
	n, err := s.Prune(ctx)
	if err != nil || n < 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if _, ok, _, _ := s.Claim(ctx, k4, Lease); !ok {
		t.Fatal("a pruned key is still there")
	}
}

// However many requests race for one key, exactly one holds it.
func TestPostgresOneHolderUnderRace(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	stores := []Store{NewPostgres(pool), NewPostgres(pool)} // two gateway instances
	k := KeyHash("account:a", "race")
	var won atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, rec, err := stores[i%2].Claim(context.Background(), k, Lease)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				won.Add(1)
			} else if !rec.Running {
				t.Error("a loser saw the key done")
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d holders", won.Load())
	}
}

// The key itself never reaches the table: only its hash does.
func TestPostgresStoresOnlyHashes(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	s := NewPostgres(pool)
	if _, _, _, err := s.Claim(context.Background(), KeyHash("account:a", "plain-key-text"), Lease); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM idempotency_keys WHERE position('plain-key-text'::bytea IN key_hash) > 0`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("plain key found: %d %v", n, err)
	}
}
