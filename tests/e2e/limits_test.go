package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// inOneWindow waits, when fewer than need remain of the current minute, until the next minute
// begins. Account windows are fixed minutes of the wall clock, so a burst and the request that
// must be refused after it have to fall into one; on a busy machine a burst takes seconds.
func inOneWindow(t *testing.T, need time.Duration) {
	t.Helper()
	now := time.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	if left := next.Sub(now); left < need {
		t.Logf("waiting %s for a fresh rate-limit window", left.Round(time.Millisecond))
		time.Sleep(left + 100*time.Millisecond)
	}
}

// burst sends n copies of req concurrently and returns how many got each status.
func burst(t *testing.T, s *harness.Stack, n int, req harness.Request, check func(*harness.Response)) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := s.Do(t, req)
			if check != nil {
				check(r)
			}
			mu.Lock()
			counts[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return counts
}

func expectRateLimited(t *testing.T, r *harness.Response, word string) {
	t.Helper()
	e := expectError(t, r, http.StatusTooManyRequests, word)
	if e.RetryAfter == nil || *e.RetryAfter < 1 || e.RetryAfterSeconds == nil || *e.RetryAfterSeconds != *e.RetryAfter {
		t.Fatalf("429 without retryAfter/retryAfterSeconds: %s", r.Body)
	}
	h := r.Header.Get("Retry-After")
	secs, err := strconv.Atoi(h)
	if err != nil || secs < 1 || secs > 60*15 {
		t.Fatalf("Retry-After %q is not whole seconds >= 1", h)
	}
	noRateLimitHeaders(t, r)
}

func TestRateLimits(t *testing.T) {
	s := defaultStack(t)

	t.Run("600 reads a minute per account and operation", func(t *testing.T) {
		t.Parallel()
		inOneWindow(t, 40*time.Second)
		a := s.NewAccount(t, "reads")
		var leaked atomic.Bool
		counts := burst(t, s, 600, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token}, func(r *harness.Response) {
			for k := range r.Header {
				if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
					leaked.Store(true)
				}
			}
		})
		if counts[http.StatusOK] != 600 {
			t.Fatalf("600 reads: %v", counts)
		}
		if leaked.Load() {
			t.Fatal("an X-RateLimit-* header was sent")
		}
		expectRateLimited(t, s.Get(t, "/api/account", a.Token), "rate_limited")
		// Another operation has its own window.
		if r := s.Get(t, "/api/tokens", a.Token); r.Status != http.StatusOK {
			t.Fatalf("other read operation: %d %s", r.Status, r.Body)
		}
		// Another account is untouched.
		b := s.NewAccount(t, "reads-other")
		if r := s.Get(t, "/api/account", b.Token); r.Status != http.StatusOK {
			t.Fatalf("other account: %d %s", r.Status, r.Body)
		}
	})

	t.Run("120 writes a minute per account and operation", func(t *testing.T) {
		t.Parallel()
		inOneWindow(t, 30*time.Second)
		a := s.NewAccount(t, "writes")
		counts := burst(t, s, 120, harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: a.Token, Body: map[string]string{"defaultRegion": "us"}}, nil)
		if counts[http.StatusOK] != 120 {
			t.Fatalf("120 writes: %v", counts)
		}
		expectRateLimited(t, s.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: a.Token, Body: map[string]string{}}), "rate_limited")
		// Reads of the same path are another operation.
		if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusOK {
			t.Fatalf("read after writes: %d", r.Status)
		}
		// So is another write.
		if r := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "n"}); r.Status != http.StatusCreated {
			t.Fatalf("other write: %d %s", r.Status, r.Body)
		}
	})

	t.Run("unauthenticated 401s count against no account", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "not-counted")
		// 60, not more: the stack is shared and every 401 also draws on 127.0.0.1's budget of
		// 100 a quarter hour (ratelimit.UnauthorizedBudget, tested in the gateway). 60 401s and
		// 600 reads are still past the account's 600, so a 401 counted would show.
		counts := burst(t, s, 60, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: "tok_" + strings.Repeat("z", 40)}, nil)
		if counts[http.StatusUnauthorized] != 60 {
			t.Fatalf("invalid tokens: %v", counts)
		}
		counts = burst(t, s, 600, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token}, nil)
		if counts[http.StatusOK] != 600 {
			t.Fatalf("the account lost budget to 401s: %v", counts)
		}
	})
}

func TestAuthBuckets(t *testing.T) {
	const limit = 6
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": strconv.Itoa(limit)}})

	// Known device codes polled (even too fast) never fill the cli/token bucket.
	dev := post(s, t, "/api/auth/cli/device", "", map[string]string{}).Map(t)
	for i := 0; i < limit+2; i++ {
		r := post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": dev["deviceCode"].(string)})
		if r.Status != http.StatusBadRequest && r.Status != http.StatusTooManyRequests {
			t.Fatalf("poll %d: %d %s", i, r.Status, r.Body)
		}
		if r.Status == http.StatusTooManyRequests {
			if e := expectError(t, r, http.StatusTooManyRequests, "slow_down"); e.RetryAfter == nil {
				t.Fatal("slow_down without retryAfter")
			}
		}
	}
	// Unknown codes fill it; past it the answer is slow_down, not rate_limited.
	for i := 0; i < limit; i++ {
		r := post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": "unknown-" + harness.Hex(8)})
		if r.Status != http.StatusBadRequest {
			t.Fatalf("unknown code %d: %d %s", i, r.Status, r.Body)
		}
	}
	expectRateLimited(t, post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": "unknown-" + harness.Hex(8)}), "slow_down")
	// The bucket refuses known codes from this address now too.
	expectRateLimited(t, post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": dev["deviceCode"].(string)}), "slow_down")

	// Each auth route has a bucket of its own.
	for i := 0; i < limit; i++ {
		r := post(s, t, "/api/auth/magic-link", "", map[string]string{"email": harness.Email("bucket")})
		if r.Status != http.StatusAccepted {
			t.Fatalf("magic-link %d: %d %s", i, r.Status, r.Body)
		}
	}
	expectRateLimited(t, post(s, t, "/api/auth/magic-link", "", map[string]string{"email": harness.Email("bucket")}), "rate_limited")
	// Without TRUSTED_PROXIES a forged X-Forwarded-For is not a new address.
	r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/auth/magic-link", Body: map[string]string{"email": harness.Email("xff")}, Header: map[string]string{"X-Forwarded-For": "203.0.113.9"}})
	expectRateLimited(t, r, "rate_limited")
	// The first device grant above took one slot of this route's bucket already.
	for i := 1; i < limit; i++ {
		r := post(s, t, "/api/auth/cli/device", "", map[string]string{})
		if r.Status != http.StatusOK {
			t.Fatalf("device %d: %d %s", i, r.Status, r.Body)
		}
	}
	expectRateLimited(t, post(s, t, "/api/auth/cli/device", "", map[string]string{}), "rate_limited")
}
