// Package stripemock starts stripe-mock for tests: Stripe's own mock of its API, built once by
// scripts/stripe-mock-build.sh. It keeps no state and sends no webhooks; tests use it to check
// that billing's requests are ones Stripe's API accepts and that its answers are read right.
package stripemock

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Start runs the binary STRIPE_MOCK_BIN names on a free port and returns its URL, for
// STRIPE_API_URL. Without STRIPE_MOCK_BIN the test fails: the Stripe path must never pass by
// being skipped.
func Start(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("STRIPE_MOCK_BIN")
	if bin == "" {
		t.Fatal("STRIPE_MOCK_BIN is not set: build stripe-mock once with scripts/stripe-mock-build.sh and run the tests with STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("STRIPE_MOCK_BIN=%s: %v; run scripts/stripe-mock-build.sh", bin, err)
	}
	addr := freeAddr(t)
	logf, err := os.CreateTemp(t.TempDir(), "stripe-mock-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-http-addr", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("GET", url+"/v1/balance", nil)
		req.SetBasicAuth("sk_test_stripemock", "")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("stripe-mock did not answer: %v\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
