package harness

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// StripeMock starts stripe-mock for the test (testinfra.StripeMock: STRIPE_MOCK_BIN, a free
// port) and returns its URL, for STRIPE_API_URL.
func StripeMock(t testing.TB) string {
	t.Helper()
	return testinfra.StripeMock(t)
}

// StripeSignature is the Stripe-Signature header Stripe would send for payload, signed at t
// with the webhook endpoint's secret: HMAC-SHA256 over "<unix time>.<payload>".
func StripeSignature(payload []byte, secret string, t time.Time) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t.Unix())
	mac.Write(payload)
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(mac.Sum(nil)))
}
