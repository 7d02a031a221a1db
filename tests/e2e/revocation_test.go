package e2e

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// twoGatewayStack is the default stack with its rate windows in Redis and a second gateway
// beside the first, as in Kubernetes: it returns the second gateway's base URL.
func twoGatewayStack(t *testing.T) (*harness.Stack, string) {
	t.Helper()
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000",
		"RATE_LIMIT_STORE":     "redis",
		"REDIS_URL":            testinfra.RedisURL(t),
		"RATE_LIMIT_PREFIX":    "e2e:" + harness.Hex(8) + ":",
	}})
	b := s.StartGateway(t, "gateway-b", nil)
	// Each gateway trusts its token cache a second after its revocation listener is bound.
	time.Sleep(1500 * time.Millisecond)
	return s, b
}

func TestRevocationIsImmediate(t *testing.T) {
	s, gatewayB := twoGatewayStack(t)

	t.Run("logout as a token's first request: the next request is 401", func(t *testing.T) {
		for i := range 3 {
			a := s.NewAccount(t, "logout-first")
			if r := post(s, t, "/api/auth/logout", a.Token, nil); r.Status != http.StatusNoContent {
				t.Fatalf("logout: %d %s", r.Status, r.Body)
			}
			if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusUnauthorized {
				t.Fatalf("run %d: read after logout: %d %s", i, r.Status, r.Body)
			}
		}
	})

	t.Run("logout after reads: the next request is 401, though reads were in flight", func(t *testing.T) {
		a := s.NewAccount(t, "logout-busy")
		for range 3 {
			if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusOK {
				t.Fatalf("read before logout: %d", r.Status)
			}
		}
		// Readers keep asking with the token while it is revoked: one that began before the
		// revocation must not leave the token (or the account) cached behind it.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var reads atomic.Int64
		defer func() {
			select {
			case <-stop:
			default:
				close(stop)
				wg.Wait()
			}
			t.Logf("%d reads ran beside the logout", reads.Load())
		}()
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					s.Get(t, "/api/account", a.Token)
					reads.Add(1)
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		if r := post(s, t, "/api/auth/logout", a.Token, nil); r.Status != http.StatusNoContent {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		// The readers stop at once: their 401s from now on spend this address's budget.
		close(stop)
		wg.Wait()
		for i := range 10 {
			if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusUnauthorized {
				t.Fatalf("read %d after logout: %d %s", i, r.Status, r.Body)
			}
			if r := s.Get(t, "/api/billing", a.Token); r.Status != http.StatusUnauthorized {
				t.Fatalf("billing read %d after logout: %d %s", i, r.Status, r.Body)
			}
		}
	})

	t.Run("revoked at gateway A: 401 at A at once and at B within one second", func(t *testing.T) {
		a := s.NewAccount(t, "revoke-two")
		created := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "bot"})
		if created.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		tok := created.Map(t)
		secret := tok["token"].(string)
		// Both gateways have the token cached.
		for range 2 {
			if r := s.Get(t, "/api/account", secret); r.Status != http.StatusOK {
				t.Fatalf("A: %d", r.Status)
			}
			if r := harness.Send(t, gatewayB, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: secret}); r.Status != http.StatusOK {
				t.Fatalf("B: %d", r.Status)
			}
		}
		del := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/tokens/" + tok["id"].(string), Token: a.Token})
		if del.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", del.Status, del.Body)
		}
		revoked := time.Now()
		if r := s.Get(t, "/api/account", secret); r.Status != http.StatusUnauthorized {
			t.Fatalf("A after revoking there: %d %s", r.Status, r.Body)
		}
		harness.Eventually(t, time.Second, "B refuses the revoked token", func() bool {
			return harness.Send(t, gatewayB, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: secret}).Status == http.StatusUnauthorized
		})
		t.Logf("B refused it %s after the revocation answered", time.Since(revoked).Round(time.Millisecond))
		// And the session that revoked it still works at both.
		if r := harness.Send(t, gatewayB, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token}); r.Status != http.StatusOK {
			t.Fatalf("B, the revoking session: %d", r.Status)
		}
	})

	t.Run("logout at gateway B: 401 at A within one second", func(t *testing.T) {
		a := s.NewAccount(t, "logout-two")
		if r := s.Get(t, "/api/account", a.Token); r.Status != http.StatusOK {
			t.Fatalf("A: %d", r.Status)
		}
		r := harness.Send(t, gatewayB, harness.Request{Method: http.MethodPost, Path: "/api/auth/logout", Token: a.Token})
		if r.Status != http.StatusNoContent {
			t.Fatalf("logout at B: %d %s", r.Status, r.Body)
		}
		if r := harness.Send(t, gatewayB, harness.Request{Method: http.MethodGet, Path: "/api/account", Token: a.Token}); r.Status != http.StatusUnauthorized {
			t.Fatalf("B after logout there: %d", r.Status)
		}
		harness.Eventually(t, time.Second, "A refuses the logged-out session", func() bool {
			return s.Get(t, "/api/account", a.Token).Status == http.StatusUnauthorized
		})
	})
}
