package logstreams

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"tori.dev/pkg/testinfra"
)

func redisPlaces(t *testing.T, prefix string) *RedisPlaces {
	t.Helper()
	opts, err := redis.ParseURL(testinfra.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return NewRedisPlaces(c, prefix)
}

// The contract every Places keeps: max places per account, a freed place comes back, renewal
// keeps a place, accounts count apart.
func TestPlacesContract(t *testing.T) {
	stores := map[string]func(t *testing.T) Places{
		"memory": func(*testing.T) Places { return NewMemory() },
		"redis":  func(t *testing.T) Places { return redisPlaces(t, "test:"+uuid.NewString()+":") },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			p := open(t)
			ctx := context.Background()
			var held []Lease
			for i := range 3 {
				l := Lease{Account: "acc", ID: uuid.NewString()}
				if ok, err := p.Take(ctx, l, 3, time.Minute); !ok || err != nil {
					t.Fatalf("place %d: %v %v", i+1, ok, err)
				}
				held = append(held, l)
			}
			if ok, err := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 3, time.Minute); ok || err != nil {
				t.Fatalf("a fourth place of three: %v %v", ok, err)
			}
			if ok, err := p.Take(ctx, Lease{Account: "other", ID: uuid.NewString()}, 3, time.Minute); !ok || err != nil {
				t.Fatalf("another account: %v %v", ok, err)
			}
			if err := p.Renew(ctx, held, time.Minute); err != nil {
				t.Fatal(err)
			}
			if ok, _ := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 3, time.Minute); ok {
				t.Fatal("renewing made room")
			}
			if err := p.Free(ctx, held[0]); err != nil {
				t.Fatal(err)
			}
			if ok, err := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 3, time.Minute); !ok || err != nil {
				t.Fatalf("after a free: %v %v", ok, err)
			}
		})
	}
}

// Two gateways sharing Redis count one account's streams together.
func TestRegistriesSharingRedisCountTogether(t *testing.T) {
	prefix := "test:" + uuid.NewString() + ":"
	a := New(3, redisPlaces(t, prefix), nil)
	b := New(3, redisPlaces(t, prefix), nil)
	s1, err1 := a.Open(ctx, "acc", "t", time.Time{})
	_, err2 := b.Open(ctx, "acc", "t", time.Time{})
	_, err3 := a.Open(ctx, "acc", "t", time.Time{})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Registry{"a": a, "b": b} {
		if _, err := r.Open(ctx, "acc", "t", time.Time{}); !errors.Is(err, ErrTooMany) {
			t.Fatalf("a fourth stream on %s: %v, want ErrTooMany", name, err)
		}
	}
	s1.Release()
	if _, err := b.Open(ctx, "acc", "t", time.Time{}); err != nil {
		t.Fatalf("after a release on the other gateway: %v", err)
	}
}

// A gateway that dies holding places (never frees nor renews them) locks nobody out for
// longer than a lease; one that lives keeps its places by renewing them.
func TestLapsedLeasesComeBackAndRenewedOnesStay(t *testing.T) {
	p := redisPlaces(t, "test:"+uuid.NewString()+":")
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	dead := Lease{Account: "acc", ID: uuid.NewString()}
	alive := Lease{Account: "acc", ID: uuid.NewString()}
	for _, l := range []Lease{dead, alive} {
		if ok, err := p.Take(ctx, l, 2, ttl); !ok || err != nil {
			t.Fatalf("take: %v %v", ok, err)
		}
	}
	if ok, _ := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 2, ttl); ok {
		t.Fatal("a third place of two")
	}
	// Only alive is renewed, twice within its lease, past dead's end.
	for range 2 {
		time.Sleep(ttl * 2 / 3)
		if err := p.Renew(ctx, []Lease{alive}, ttl); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 2, ttl); !ok || err != nil {
		t.Fatalf("the dead holder's place did not come back: %v %v", ok, err)
	}
	if ok, _ := p.Take(ctx, Lease{Account: "acc", ID: uuid.NewString()}, 2, ttl); ok {
		t.Fatal("the renewed lease lapsed")
	}
}
