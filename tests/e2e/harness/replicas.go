package harness

import (
	"os"
	"path/filepath"
	"testing"

	"tori.dev/pkg/testinfra"
)

// A two-replica stack (Options.Replicas = 2), as two pods of each Deployment behind their
// Services: a second process of every control-plane service, each with the first's
// credentials and settings and an address of its own, and a second gateway whose upstreams
// are those second processes. The first gateway routes to the first processes, so a test that
// alternates Stack.Gateways exercises both HTTP paths; on the bus the two processes of a
// service are competing consumers, run an outbox relay and the periodic sweeps each.

// replicated are the services run twice, the gateway apart; each one's address variable
// and the variable the gateway reaches it by.
var replicated = []struct{ name, addrVar, urlVar string }{
	{"identity", "IDENTITY_ADDR", "IDENTITY_URL"},
	{"billing", "BILLING_ADDR", "BILLING_URL"},
	{"apps", "APPS_ADDR", "APPS_URL"},
	{"deploys", "DEPLOYS_ADDR", "DEPLOYS_URL"},
	{"logs", "LOGS_ADDR", "LOGS_URL"},
	{"databases", "DATABASES_ADDR", "DATABASES_URL"},
}

// ReplicaName is the process name of service's second replica.
func ReplicaName(service string) string { return service + "-2" }

// replicaSettings make the gateways share what must be shared between them (rate-limit
// windows in Redis; idempotency keys are in the gateway's schema already) and keep the
// stack's Postgres connections few: twice the processes share the machine's 300.
func replicaSettings(t testing.TB, env map[string]string) {
	t.Helper()
	defaults := map[string]string{
		"RATE_LIMIT_STORE":        "redis",
		"REDIS_URL":               testinfra.RedisURL(t),
		"RATE_LIMIT_PREFIX":       "e2e:" + Hex(8) + ":",
		"GATEWAY_DB_MAX_CONNS":    "4",
		"GATEWAY_READY_UPSTREAMS": "identity,billing,apps,deploys,logs,databases",
	}
	for k, v := range defaults {
		if _, set := env[k]; !set {
			env[k] = v
		}
	}
}

// startReplicas runs the second replica of every built service, then the second gateway.
func (s *Stack) startReplicas(t testing.TB) {
	t.Helper()
	upstreams := map[string]string{}
	for _, r := range replicated {
		if _, err := os.Stat(filepath.Join(s.bin, r.name)); err != nil {
			continue
		}
		name := ReplicaName(r.name)
		addr := testinfra.FreeAddr(t)
		s.creds[name] = map[string]string{}
		for k, v := range s.creds[r.name] {
			s.creds[name][k] = v
		}
		s.creds[name][r.addrVar] = addr
		upstreams[r.urlVar] = "http://" + addr
		s.startExtra(name, r.name, addr)
	}
	name := ReplicaName("gateway")
	addr := testinfra.FreeAddr(t)
	s.creds[name] = map[string]string{}
	for k, v := range s.creds["gateway"] {
		s.creds[name][k] = v
	}
	for k, v := range upstreams {
		s.creds[name][k] = v
	}
	s.creds[name]["GATEWAY_ADDR"] = addr
	s.creds[name]["GATEWAY_METRICS_ADDR"] = testinfra.FreeAddr(t)
	s.startExtra(name, "gateway", addr)
	s.Gateways = append(s.Gateways, "http://"+addr)
}

// Via is the stack as seen through gateway i of Gateways (0: the stack's own): the same
// services and zones, another Gateway, so every request helper goes through that one.
func (s *Stack) Via(i int) *Stack {
	view := *s
	view.Gateway = s.Gateways[i%len(s.Gateways)]
	return &view
}
