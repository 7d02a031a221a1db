package ratelimit

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

var svc = pgstore.Service{Schema: "gateway", Role: "tori_gateway"}

// newPools gives the test its own database, migrated once per migration fingerprint, and n
// pools on it: n gateway instances.
func newPools(t *testing.T, n int) []*pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	fp, err := pgstore.Fingerprint(Migrations)
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "gateway_"+fp, func(ctx context.Context, url string) error {
		pool, err := pgstore.Setup(ctx, url, svc, pgstore.WithMigrations(Migrations))
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	var pools []*pgxpool.Pool
	for i := 0; i < n; i++ {
		pool, err := pgstore.Setup(ctx, admin, svc, pgstore.WithMigrations(Migrations))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pools = append(pools, pool)
	}
	return pools
}

func TestPostgresHitAndPeek(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := NewPostgres(newPools(t, 1)[0])

	c, err := l.Peek(ctx, "k", time.Hour)
	if err != nil || c.N != 0 {
		t.Fatalf("peek of nothing: %+v %v", c, err)
	}
	for i := int64(1); i <= 3; i++ {
		c, err := l.Hit(ctx, "k", time.Hour)
		if err != nil || c.N != i {
			t.Fatalf("hit %d: %+v %v", i, c, err)
		}
		if c.ResetIn <= 0 || c.ResetIn > time.Hour {
			t.Fatalf("reset in %s", c.ResetIn)
		}
	}
	if c, _ := l.Peek(ctx, "k", time.Hour); c.N != 3 {
		t.Fatalf("peek %d, want 3: peeking must not count", c.N)
	}
	if c, _ := l.Hit(ctx, "other", time.Hour); c.N != 1 {
		t.Fatalf("keys share a counter: %d", c.N)
	}
	if c, _ := l.Hit(ctx, "k", time.Minute); c.N != 1 {
		t.Fatalf("windows of another length share a counter: %d", c.N)
	}
}

// Two gateway instances hitting one key concurrently: no hit is lost and no count is handed
// out twice, which is what keeps the 600th/601st edge exact across instances.
func TestPostgresInstancesShareCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pools := newPools(t, 2)
	limiters := []*Postgres{NewPostgres(pools[0]), NewPostgres(pools[1])}

	// Stay clear of a minute boundary, which would split the hits over two windows (a wait on
	// the clock, not on the system under test).
	if s := time.Now().Second(); s >= 57 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	const perInstance = 60
	var (
		mu     sync.Mutex
		counts []int64
		wg     sync.WaitGroup
	)
	for _, l := range limiters {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perInstance/4; i++ {
					c, err := l.Hit(ctx, "acct shared GET /api/apps", time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					counts = append(counts, c.N)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	sort.Slice(counts, func(i, j int) bool { return counts[i] < counts[j] })
	for i, n := range counts {
		if n != int64(i+1) {
			t.Fatalf("counts %v: want exactly 1..%d", counts, 2*perInstance)
		}
	}
	c, err := limiters[1].Peek(ctx, "acct shared GET /api/apps", time.Minute)
	if err != nil || c.N != 2*perInstance {
		t.Fatalf("peek from the other instance: %+v %v", c, err)
	}
}

func TestPostgresWindowsRollOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := NewPostgres(newPools(t, 1)[0])
	first, err := l.Hit(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A wait on the clock, not on the system: the length slept is what is tested, since a
	// ResetIn shorter than the window's real end would find the old window still counting.
	time.Sleep(first.ResetIn + 20*time.Millisecond)
	next, err := l.Hit(ctx, "k", time.Second)
	if err != nil || next.N != 1 {
		t.Fatalf("after the window: %+v %v", next, err)
	}
}

func TestPostgresPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPools(t, 1)[0]
	l := NewPostgres(pool)
	if _, err := pool.Exec(ctx, `INSERT INTO counters (bucket, window_start, window_end, n)
		VALUES ('old', now() - interval '20 minutes', now() - interval '5 minutes', 7)`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Hit(ctx, "current", time.Minute); err != nil {
		t.Fatal(err)
	}
	n, err := l.Prune(ctx)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want the one ended window", n, err)
	}
	if c, _ := l.Peek(ctx, "current", time.Minute); c.N != 1 {
		t.Fatal("prune removed a live window")
	}
}

// The counters are the gateway's alone: its own schema, unlogged.
func TestPostgresTableIsUnloggedInGatewaySchema(t *testing.T) {
	t.Parallel()
	pool := newPools(t, 1)[0]
	var persistence string
	err := pool.QueryRow(context.Background(),
		`SELECT c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'gateway' AND c.relname = 'counters'`).Scan(&persistence)
	if err != nil || persistence != "u" {
		t.Fatalf("relpersistence %q, %v", persistence, err)
	}
}
