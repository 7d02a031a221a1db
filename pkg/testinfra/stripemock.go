package testinfra

import (
	"net/http"
	"os"
	"path/filepath"
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
	t.Cleanup(func() { logf.Close() }) // after the process's own cleanup, which runs first
	exited := runUntilCleanup(t, bin, nil, logf, "-http-addr", addr, "-https-unix", httpsSocket)
	url := "http://" + addr
	// It reads Stripe's whole OpenAPI description at start: seconds on a busy machine.
	awaitUp(t, "stripe-mock", exited, logf, 60*time.Second, func() bool {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/balance", nil)
		req.SetBasicAuth("sk_test_stripemock", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}
