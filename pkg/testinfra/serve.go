package testinfra

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServeFunc is a service's composition root with its environment and log sink handed in:
// the `serve` that every `cmd/<name>/run.go` defines and `run` calls with the process's own.
type ServeFunc func(ctx context.Context, env map[string]string, logs io.Writer) error

// Service describes one service to stand up in-process for a test.
type Service struct {
	// Name is the service's name ("identity"); its address variable is NAME_ADDR unless
	// AddrVar says otherwise.
	Name    string
	Serve   ServeFunc
	AddrVar string
	// ReadyPath is polled on that address until it answers 200; "/readyz" when empty.
	ReadyPath string
	// Env is added to (and overrides) the environment Start makes.
	Env map[string]string
}

// Running is a service a test started; it stops, and must stop cleanly, when the test ends.
type Running struct {
	URL  string            // http://host:port of its HTTP server
	Env  map[string]string // the environment it was given
	Logs *LogBuffer
}

// ServiceEnv is the environment every service needs under test: a database of its own with
// the service's schema owned by a role made for this test alone (<NAME>_DATABASE_URL, never
// a superuser), the service's broker user (<NAME>_AMQP_URL), a bus namespace of its own with
// short retries and queues that expire, a signing key, a data folder and a free address.
// DATABASE_URL and AMQP_URL are the admin URLs of the same database and broker, for the
// test's own checks and fakes; no service reads them.
func ServiceEnv(t testing.TB, name string) map[string]string {
	t.Helper()
	return serviceEnv(t, name, "")
}

func serviceEnv(t testing.TB, name, zone string) map[string]string {
	t.Helper()
	admin := NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	env := map[string]string{
		"DATABASE_URL":        admin,
		"AMQP_URL":            AMQPURL(t),
		"BUS_NAMESPACE":       Namespace(t) + ".",
		"BUS_QUEUE_TYPE":      "classic",
		"BUS_QUEUE_EXPIRES":   "5m",
		"BUS_BASE_BACKOFF":    "20ms",
		"BUS_REQUEST_TIMEOUT": "3s",
		"GATEWAY_SIGNING_KEY": "test-signing-key-" + randomHex(8),
		"DATA_DIR":            t.TempDir(),
		addrVar(name, ""):     FreeAddr(t),
	}
	for k, v := range ServiceCredentials(t, admin, name, zone) {
		env[k] = v
	}
	return env
}

// ServiceCredentials are what bin/bootstrap would write for the service called name (and, for
// the zone agent, zone; "local" when empty) against the test's database adminURL:
// <NAME>_DATABASE_URL, a role of this test's own owning the service's schema, and
// <NAME>_AMQP_URL, the service's test broker user.
func ServiceCredentials(t testing.TB, adminURL, name, zone string) map[string]string {
	t.Helper()
	prefix := strings.ToUpper(name)
	return map[string]string{
		prefix + "_DATABASE_URL": ServiceRoleURL(t, adminURL, serviceSchema(name, zone)),
		prefix + "_AMQP_URL":     ServiceAMQPURL(t, servicePrincipal(name, zone)),
	}
}

// serviceSchema is the schema a service keeps its tables in: its name, or for the zone agent
// zoneagent_<zone> (services/zoneagent/internal/store.Service).
func serviceSchema(name, zone string) string {
	if name != "zoneagent" {
		return name
	}
	if zone == "" {
		zone = "local"
	}
	return "zoneagent_" + strings.ReplaceAll(zone, "-", "_")
}

func addrVar(name, given string) string {
	if given != "" {
		return given
	}
	return strings.ToUpper(name) + "_ADDR"
}

// Start runs s until the test ends and returns once it answers its ready path. A service
// that stops before it is ready fails the test with its error and its log.
func (s Service) Start(t testing.TB) *Running {
	t.Helper()
	env := serviceEnv(t, s.Name, s.Env["ZONE_ID"])
	for k, v := range s.Env {
		env[k] = v
	}
	r := &Running{URL: "http://" + env[addrVar(s.Name, s.AddrVar)], Env: env, Logs: &LogBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, env, r.Logs) }()
	stopped := false
	t.Cleanup(func() {
		cancel()
		if stopped {
			return
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop within 30s of the test's end", s.Name)
		}
	})

	path := s.ReadyPath
	if path == "" {
		path = "/readyz"
	}
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			stopped = true
			if err == nil {
				err = errors.New("returned nil")
			}
			t.Fatalf("%s stopped before it was ready: %v\n%s", s.Name, err, r.Logs.String())
		default:
		}
		if res, err := client.Get(r.URL + path); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not ready at %s%s within 60s\n%s", s.Name, r.URL, path, r.Logs.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var (
	handedMu sync.Mutex
	handed   = map[int]bool{} // ports FreeAddr has handed out in this process
)

// FreeAddr is a loopback address with a port nothing listens on now. Ports are picked below
// the kernel's ephemeral range (32768 and up on Linux), so no outgoing connection takes one
// between the pick and the service binding it, and never twice in one test process, so two
// stacks started side by side cannot both be handed a port before either binds it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	handedMu.Lock()
	defer handedMu.Unlock()
	for range 200 {
		port := 20000 + mrand.IntN(12000)
		if handed[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		ln.Close()
		handed[port] = true
		return addr
	}
	t.Fatal("testinfra: no free port after 200 tries")
	return ""
}
