package ratelimit

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"tori.dev/pkg/testinfra"
)

// newRedis is n gateway instances' limiters on the test Redis, sharing a key prefix of the
// test's own.
func newRedis(t *testing.T, n int) []Limiter {
	t.Helper()
	opts, err := redis.ParseURL(testinfra.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "test:" + uuid.NewString() + ":"
	var out []Limiter
	for range n {
		c := redis.NewClient(opts)
		t.Cleanup(func() { c.Close() })
		out = append(out, NewRedis(c, prefix))
	}
	return out
}

// Every store keeps the Limiter contract.
func TestLimiterContract(t *testing.T) {
	stores := map[string]func(t *testing.T) Limiter{
		"memory": func(*testing.T) Limiter { return NewMemory(nil) },
		"redis":  func(t *testing.T) Limiter { return newRedis(t, 1)[0] },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := open(t)
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
			// Windows of different lengths that start at the same moment (an hour's and a
			// minute's do at every hour; these two at the epoch, whatever the time now).
			century := 100 * 365 * 24 * time.Hour
			if c, _ := l.Hit(ctx, "epoch", century); c.N != 1 {
				t.Fatalf("first hit of a century's window: %d", c.N)
			}
			if c, _ := l.Hit(ctx, "epoch", 2*century); c.N != 1 {
				t.Fatalf("windows of another length that start together share a counter: %d", c.N)
			}
			// A window ends when ResetIn says: a wait on the clock, not on the system, since a
			// ResetIn shorter than the window's real end would find the old window counting.
			first, err := l.Hit(ctx, "short", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(first.ResetIn + 20*time.Millisecond)
			if next, err := l.Hit(ctx, "short", time.Second); err != nil || next.N != 1 {
				t.Fatalf("after the window: %+v %v", next, err)
			}
		})
	}
}

// Two gateway instances hitting one key concurrently through Redis: no hit is lost and no
// count is handed out twice, which is what keeps the 600th/601st edge exact across them.
func TestRedisInstancesShareCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limiters := newRedis(t, 2)
	// Stay clear of a minute boundary, which would split the hits over two windows (a wait on
	// the clock, not on the system under test).
	if s := time.Now().Second(); s >= 57 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	const perInstance = 200
	var (
		mu     sync.Mutex
		counts []int64
		wg     sync.WaitGroup
	)
	for _, l := range limiters {
		for range 4 {
			wg.Go(func() {
				for range perInstance / 4 {
					c, err := l.Hit(ctx, "acct shared GET /api/apps", time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					counts = append(counts, c.N)
					mu.Unlock()
				}
			})
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

// A counter expires with its window (plus a second's grace): Redis keeps nothing old.
func TestRedisCountersExpire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts, err := redis.ParseURL(testinfra.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	prefix := "test:" + uuid.NewString() + ":"
	l := NewRedis(c, prefix)
	if _, err := l.Hit(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v %v", keys, err)
	}
	ttl, err := c.PTTL(ctx, keys[0]).Result()
	if err != nil || ttl <= 0 || ttl > time.Minute+time.Second {
		t.Fatalf("ttl %s %v, want at most the window and a second", ttl, err)
	}
	if _, err := l.Peek(ctx, "never-hit", time.Minute); err != nil {
		t.Fatal(err)
	}
	if keys, err := c.Keys(ctx, prefix+"never-hit*").Result(); err != nil || len(keys) != 0 {
		t.Fatalf("a peek created a counter: %v %v", keys, err)
	}
}
