package ratelimit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// 15 seconds into a minute, so the window has 45 seconds left.
var base = time.Date(2026, 11, 22, 2, 30, 15, 0, time.UTC)

func exceeded(t *testing.T, err error) *Exceeded {
	t.Helper()
	var e *Exceeded
	if !errors.As(err, &e) {
		t.Fatalf("want Exceeded, got %v", err)
	}
	return e
}

func TestAccountReadsAndWrites(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: base}
	p := NewPolicy(NewMemory(clk.now), 20, quiet)

	for i := 1; i <= ReadsPerMinute; i++ {
		if err := p.Account(ctx, "acct-1", "GET /api/apps", true); err != nil {
			t.Fatalf("read %d refused: %v", i, err)
		}
	}
	e := exceeded(t, p.Account(ctx, "acct-1", "GET /api/apps", true))
	if e.Code != CodeRateLimited || e.RetryAfter != 45 {
		t.Fatalf("601st read: %+v", e)
	}

	for i := 1; i <= WritesPerMinute; i++ {
		if err := p.Account(ctx, "acct-1", "POST /api/apps", false); err != nil {
			t.Fatalf("write %d refused: %v", i, err)
		}
	}
	exceeded(t, p.Account(ctx, "acct-1", "POST /api/apps", false))

	// Another operation and another account have windows of their own.
	if err := p.Account(ctx, "acct-1", "DELETE /api/apps/{slug}", false); err != nil {
		t.Fatal(err)
	}
	if err := p.Account(ctx, "acct-2", "POST /api/apps", false); err != nil {
		t.Fatal(err)
	}

	// The next window starts afresh.
	clk.set(base.Add(45 * time.Second))
	if err := p.Account(ctx, "acct-1", "POST /api/apps", false); err != nil {
		t.Fatalf("new window: %v", err)
	}
}

func TestRetryAfterIsAtLeastOneSecond(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: base.Truncate(time.Minute).Add(59*time.Second + 900*time.Millisecond)}
	p := NewPolicy(NewMemory(clk.now), 20, quiet)
	for i := 0; i < WritesPerMinute; i++ {
		_ = p.Account(ctx, "a", "POST /x", false)
	}
	if e := exceeded(t, p.Account(ctx, "a", "POST /x", false)); e.RetryAfter != 1 {
		t.Fatalf("retry after %d, want 1 (100ms rounded up)", e.RetryAfter)
	}
}

func TestAddressBuckets(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: base}
	p := NewPolicy(NewMemory(clk.now), 3, quiet)
	for i := 0; i < 3; i++ {
		if err := p.Address(ctx, "198.51.100.5", "POST /api/auth/magic-link"); err != nil {
			t.Fatal(err)
		}
	}
	e := exceeded(t, p.Address(ctx, "198.51.100.5", "POST /api/auth/magic-link"))
	// The quarter hour began at 2:30:00, so 14m45s remain.
	if e.Code != CodeRateLimited || e.RetryAfter != 14*60+45 {
		t.Fatalf("%+v", e)
	}
	if err := p.Address(ctx, "198.51.100.5", "POST /api/auth/magic-link/verify"); err != nil {
		t.Fatalf("each route has its own bucket: %v", err)
	}
	if err := p.Address(ctx, "198.51.100.6", "POST /api/auth/magic-link"); err != nil {
		t.Fatalf("each address has its own bucket: %v", err)
	}
}

func TestFlaggedBucketCountsOnlyWhenTold(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: base}
	p := NewPolicy(NewMemory(clk.now), 2, quiet)
	const op = "POST /api/auth/cli/token"
	for i := 0; i < 10; i++ { // polls that identity does not flag never fill the bucket
		if err := p.AddressOpen(ctx, "a", op); err != nil {
			t.Fatal(err)
		}
	}
	p.CountAddress(ctx, "a", op)
	if err := p.AddressOpen(ctx, "a", op); err != nil {
		t.Fatal(err)
	}
	p.CountAddress(ctx, "a", op)
	e := exceeded(t, p.AddressOpen(ctx, "a", op))
	if e.Code != CodeSlowDown || e.RetryAfter < 1 {
		t.Fatalf("%+v", e)
	}
}

type broken struct{}

func (broken) Hit(context.Context, string, time.Duration) (Count, error) {
	return Count{}, errors.New("down")
}
func (broken) Peek(context.Context, string, time.Duration) (Count, error) {
	return Count{}, errors.New("down")
}

func TestFailsOpen(t *testing.T) {
	p := NewPolicy(broken{}, 1, quiet)
	for i := 0; i < 5; i++ {
		if err := p.Account(context.Background(), "a", "POST /x", false); err != nil {
			t.Fatal(err)
		}
		if err := p.AddressOpen(context.Background(), "a", "POST /x"); err != nil {
			t.Fatal(err)
		}
	}
}
