package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// The processes of a stack and the variable holding each one's health address.
var healthAddrVars = map[string]string{
	"gateway": "GATEWAY_ADDR", "identity": "IDENTITY_ADDR", "billing": "BILLING_ADDR",
	"apps": "APPS_ADDR", "deploys": "DEPLOYS_ADDR", "logs": "LOGS_ADDR",
	"databases": "DATABASES_ADDR", "zoneagent": "ZONEAGENT_ADDR",
}

// probe is GET http://addr+path: its status (0 when nothing answers) and the names a 503
// waits for.
func probe(addr, path string) (int, []string) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var body struct {
		Waiting []string `json:"waiting"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Waiting
}

// hostOf is the "host:port" of a URL in the environment.
func hostOf(t *testing.T, env string) string {
	t.Helper()
	u, err := url.Parse(os.Getenv(env))
	if err != nil || u.Host == "" {
		t.Fatalf("%s: no host in %q", env, os.Getenv(env))
	}
	return u.Host
}

// Losing the database, then the broker, makes every process's /readyz 503 within five
// seconds (naming what is lost) while /healthz stays 200, and each /readyz is 200 again once
// it returns. The stack reaches Postgres and RabbitMQ through proxies of the test's own, cut
// here; the machine's servers are never touched.
func TestReadyzFollowsDatabaseAndBroker(t *testing.T) {
	pgAddr, mqAddr := hostOf(t, "TEST_DATABASE_URL"), hostOf(t, "TEST_AMQP_URL")
	pg, mq := testinfra.NewProxy(t, pgAddr), testinfra.NewProxy(t, mqAddr)
	s := harness.Start(t, harness.Options{
		Env:      map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"},
		Redirect: map[string]string{pgAddr: pg.Addr(), mqAddr: mq.Addr()},
	})
	everyReady := func(what string) {
		t.Helper()
		for name, v := range healthAddrVars {
			harness.Eventually(t, 30*time.Second, name+" ready "+what, func() bool {
				status, _ := probe(s.Env[v], "/readyz")
				return status == http.StatusOK
			})
		}
	}
	everyReady("at start")

	for _, lost := range []struct {
		name  string
		proxy *testinfra.Proxy
	}{{"database", pg}, {"broker", mq}} {
		lost.proxy.Down()
		deadline := time.Now().Add(5 * time.Second)
		for name, v := range healthAddrVars {
			for {
				status, waiting := probe(s.Env[v], "/readyz")
				// The gateway's own loss or an upstream's: it names either.
				if status == http.StatusServiceUnavailable && (name == "gateway" || slices.Contains(waiting, lost.name)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s /readyz with the %s lost: %d %v five seconds on", name, lost.name, status, waiting)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if status, _ := probe(s.Env[v], "/healthz"); status != http.StatusOK {
				t.Fatalf("%s /healthz with the %s lost: %d; liveness must not follow dependencies", name, lost.name, status)
			}
		}
		lost.proxy.Up()
		everyReady("with the " + lost.name + " back")
	}
}
