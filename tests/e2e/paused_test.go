package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// From day 14 of a payment-failure hold every site of the account answers 503 with a page
// that says only that it is paused; paying serves them again at once, nothing deleted.
func TestAHeldAccountsSitesArePausedFromDay14(t *testing.T) {
	s := paidStack(t)
	a := s.NewAccount(t, "paused")
	id := accountID(t, s, a.Email)
	slug := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "still here"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "still here")

	since := time.Now().Add(-15 * 24 * time.Hour).Truncate(time.Second)
	send(t, s, stripeEvent{ID: "evt_fail15_" + id, Type: "invoice.payment_failed", Created: since, Object: invoiceObject(id, "open", since)})
	harness.Eventually(t, 20*time.Second, "the site paused", func() bool {
		status, body := edgeGet(t, s, slug, "/")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "This site is paused")
	})
	if _, body := edgeGet(t, s, slug, "/"); strings.Contains(strings.ToLower(body), "pay") || strings.Contains(strings.ToLower(body), "bill") {
		t.Fatalf("the paused page says why: %s", body)
	}
	if h, _ := s.Get(t, "/api/billing", a.Token).Map(t)["hold"].(map[string]any); h == nil || h["stage"] != "serving_stopped" {
		t.Fatalf("hold %v", h)
	}

	send(t, s, stripeEvent{ID: "evt_paid15_" + id, Type: "invoice.paid", Created: time.Now(), Object: invoiceObject(id, "paid", since)})
	waitEdge(t, s, slug, "/", "still here")
}
