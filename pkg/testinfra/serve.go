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

// ServiceEnv is the environment every service needs under test: a database of its own (an
// admin URL the service sets its schema up in), a bus namespace of its own with short
// retries and queues that expire, a signing key, a data folder and a free address.
func ServiceEnv(t testing.TB, name string) map[string]string {
	t.Helper()
	return map[string]string{
		"DATABASE_URL":        NewDatabase(t, "empty", func(context.Context, string) error { return nil }),
		"AMQP_URL":            AMQPURL(t),
		"BUS_NAMESPACE":       Namespace(t),
		"BUS_QUEUE_TYPE":      "classic",
		"BUS_QUEUE_EXPIRES":   "5m",
		"BUS_BASE_BACKOFF":    "20ms",
		"BUS_REQUEST_TIMEOUT": "3s",
		"GATEWAY_SIGNING_KEY": "test-signing-key-" + randomHex(8),
		"DATA_DIR":            t.TempDir(),
		addrVar(name, ""):     FreeAddr(t),
	}
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
	env := ServiceEnv(t, s.Name)
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

// FreeAddr is a loopback address with a port nothing listens on now. Ports are picked below
// the kernel's ephemeral range (32768 and up on Linux), so no outgoing connection takes one
// between the pick and the service binding it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 200 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+mrand.IntN(12000)))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatal("testinfra: no free port after 200 tries")
	return ""
}
