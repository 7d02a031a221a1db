package harness

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// StripeMock starts stripe-mock (built by scripts/stripe-mock-build.sh, named by
// STRIPE_MOCK_BIN) on a free port for the test and returns its URL, for STRIPE_API_URL.
// Without STRIPE_MOCK_BIN the test fails rather than skip.
func StripeMock(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("STRIPE_MOCK_BIN")
	if bin == "" {
		t.Fatal("STRIPE_MOCK_BIN is not set: run the tests with STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
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
	})
	url := "http://" + addr
	Eventually(t, 30*time.Second, "stripe-mock to answer", func() bool {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/balance", nil)
		req.SetBasicAuth("sk_test_e2e", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

// StripeSignature is the Stripe-Signature header Stripe would send for payload, signed at t
// with the webhook endpoint's secret: HMAC-SHA256 over "<unix time>.<payload>".
func StripeSignature(payload []byte, secret string, t time.Time) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t.Unix())
	mac.Write(payload)
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(mac.Sum(nil)))
}
