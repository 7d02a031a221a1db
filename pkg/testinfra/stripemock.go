package testinfra

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// StripeMock runs stripe-mock (Stripe's own mock of its API, built once by
// scripts/stripe-mock-build.sh and named by STRIPE_MOCK_BIN) on a free port until the test
// ends, and returns its URL, for STRIPE_API_URL. It keeps no state and sends no webhooks.
// Without STRIPE_MOCK_BIN the test fails: the Stripe path must never pass by being skipped.
func StripeMock(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("STRIPE_MOCK_BIN")
	if bin == "" {
		t.Fatal("STRIPE_MOCK_BIN is not set: build stripe-mock once with scripts/stripe-mock-build.sh and run the tests with STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("STRIPE_MOCK_BIN=%s: %v; run scripts/stripe-mock-build.sh", bin, err)
	}
	// Not a port of the ephemeral range: an outgoing connection could take it before
	// stripe-mock binds it, and stripe-mock would exit while the test waits.
	addr := FreeAddr(t)
	logf, err := os.CreateTemp(t.TempDir(), "stripe-mock-*.log")
	if err != nil {
		t.Fatal(err)
	}
	// stripe-mock also serves HTTPS, on port 12112 unless told otherwise, even with
	// -http-addr: a second stripe-mock on the machine (another package's test) would find
	// that port taken and exit. A socket of the test's own keeps every instance apart.
	httpsSocket := filepath.Join(t.TempDir(), "https.sock")
	cmd := exec.Command(bin, "-http-addr", addr, "-https-unix", httpsSocket)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	url := "http://" + addr
	// It reads Stripe's whole OpenAPI description at start: seconds on a busy machine.
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/balance", nil)
		req.SetBasicAuth("sk_test_stripemock", "")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("stripe-mock exited before answering:\n%s", out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("stripe-mock did not answer within 60s:\n%s", out)
		}
	}
}
