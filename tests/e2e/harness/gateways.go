package harness

import (
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// StartGateway runs one more gateway process beside the stack's, named name, with the same
// environment and credentials but its own address (and env laid over the stack's), and
// returns its base URL. Start the stack with RATE_LIMIT_STORE=redis so the two share their
// windows, as gateways behind one load balancer do.
func (s *Stack) StartGateway(t testing.TB, name string, env map[string]string) string {
	t.Helper()
	addr := testinfra.FreeAddr(t)
	s.creds[name] = map[string]string{}
	for k, v := range s.creds["gateway"] {
		s.creds[name][k] = v
	}
	for k, v := range env {
		s.creds[name][k] = v
	}
	// creds come after the stack's settings in environ, so these addresses win: each
	// gateway serves its API and its metrics on ports of its own.
	s.creds[name]["GATEWAY_ADDR"] = addr
	if _, set := env["GATEWAY_METRICS_ADDR"]; !set {
		s.creds[name]["GATEWAY_METRICS_ADDR"] = testinfra.FreeAddr(t)
	}
	s.startBinary(name, "gateway")
	s.services = append(s.services, name)
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for !s.answersAs(base+"/healthz", "gateway") {
		if time.Now().After(deadline) {
			t.Fatalf("harness: %s did not answer on %s", name, base)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base
}

// StartReplica runs another process of service binary (its built name, e.g. "apps") beside
// the stack's, named name, with the same environment and credentials but its own address in
// addrVar, as a second replica behind one Kubernetes Service; it returns the replica's
// host:port once it is ready.
func (s *Stack) StartReplica(t testing.TB, name, binary, addrVar string) string {
	t.Helper()
	addr := testinfra.FreeAddr(t)
	s.creds[name] = map[string]string{}
	for k, v := range s.creds[binary] {
		s.creds[name][k] = v
	}
	s.creds[name][addrVar] = addr
	s.startBinary(name, binary)
	s.services = append(s.services, name)
	deadline := time.Now().Add(60 * time.Second)
	for !s.answersAs("http://"+addr+"/healthz", binary) || !ok("http://"+addr+"/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("harness: %s did not become ready on %s", name, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return addr
}
