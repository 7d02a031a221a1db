package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/gateway/internal/auth"
)

// Two gateways sharing Redis hold the contract's edges exactly between them: the 600th read
// of a minute passes and the 601st is refused, whichever gateway each went to; likewise the
// 120th and 121st write.
func TestTwoGatewaysShareTheLimitsExactly(t *testing.T) {
	id := newIdentity(t)
	token := "svc_" + uuid.NewString()
	id.set(token, &auth.Introspection{AccountID: uuid.NewString(), UserID: "u", TokenKind: "api", TokenID: uuid.NewString()})
	env := map[string]string{
		"IDENTITY_URL": id.srv.URL, "APPS_URL": id.srv.URL,
		"RATE_LIMIT_STORE": "redis", "REDIS_URL": testinfra.RedisURL(t), "RATE_LIMIT_PREFIX": "test:" + uuid.NewString() + ":",
	}
	gateways := []string{start(t, env).URL, start(t, env).URL}

	// Both bursts inside one window: start them in a minute with time to spare (a wait on
	// the clock, not on the system under test).
	if s := time.Now().Second(); s >= 40 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	burst := func(method string, limit int) {
		t.Helper()
		for i := 1; i <= limit; i++ {
			status, body := call(t, method, gateways[i%2]+"/api/apps", token)
			if status == http.StatusTooManyRequests {
				t.Fatalf("%s %d of %d refused by gateway %d: %s", method, i, limit, i%2, body)
			}
		}
		for g, base := range gateways {
			status, body := call(t, method, base+"/api/apps", token)
			var e struct{ Code string }
			_ = json.Unmarshal(body, &e)
			if status != http.StatusTooManyRequests || e.Code != "rate_limited" {
				t.Fatalf("%s %d at gateway %d: %d %s, want 429 rate_limited", method, limit+1, g, status, body)
			}
		}
	}
	burst(http.MethodGet, 600)
	burst(http.MethodPost, 120)
}
