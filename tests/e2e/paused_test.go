package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// From day 14 of a payment-failure hold every site of the account answers 503 with a page
// that says only that it is paused; from day 30 its artifacts are marked reclaimable, and
// nothing is deleted. Paying serves the sites again and clears the mark.
func TestAHeldAccountsSitesArePausedFromDay14(t *testing.T) {
	s := paidStack(t, "DEPLOYS_SWEEP_EVERY", "1s")
	for _, c := range []struct {
		days  int
		stage string
	}{{15, "serving_stopped"}, {31, "reclaimable"}} {
		t.Run(fmt.Sprintf("day %d", c.days), func(t *testing.T) {
			a := s.NewAccount(t, "paused")
			id := accountID(t, s, a.Email)
			slug := createApp(t, s, a.Token, "static")
			r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "still here"})
			if r.Status != http.StatusCreated {
				t.Fatalf("deploy: %d %s", r.Status, r.Body)
			}
			deployID := r.Map(t)["id"].(string)
			waitStatus(t, s, a.Token, slug, deployID, "live")
			waitEdge(t, s, slug, "/", "still here")

			since := time.Now().Add(-time.Duration(c.days) * 24 * time.Hour).Truncate(time.Second)
			send(t, s, stripeEvent{ID: "evt_fail_" + id, Type: "invoice.payment_failed", Created: since, Object: invoiceObject(id, "open", since)})
			harness.Eventually(t, 20*time.Second, "the site paused", func() bool {
				status, body := edgeGet(t, s, slug, "/")
				return status == http.StatusServiceUnavailable && strings.Contains(body, "This site is paused")
			})
			if _, body := edgeGet(t, s, slug, "/"); strings.Contains(strings.ToLower(body), "pay") || strings.Contains(strings.ToLower(body), "bill") {
				t.Fatalf("the paused page says why: %s", body)
			}
			if h, _ := s.Get(t, "/api/billing", a.Token).Map(t)["hold"].(map[string]any); h == nil || h["stage"] != c.stage {
				t.Fatalf("hold %v, want stage %s", h, c.stage)
			}
			// Day 29 not yet marked is deploys' own test; here, day 31 marked.
			if c.days >= 30 {
				waitReclaimable(t, s, deployID, true)
			}

			send(t, s, stripeEvent{ID: "evt_paid_" + id, Type: "invoice.paid", Created: time.Now(), Object: invoiceObject(id, "paid", since)})
			waitEdge(t, s, slug, "/", "still here")
			if c.days >= 30 {
				waitReclaimable(t, s, deployID, false)
			}
		})
	}
}

// waitReclaimable waits until the deploys service's mark on the deploy's artifact is want.
func waitReclaimable(t *testing.T, s *harness.Stack, deployID string, want bool) {
	t.Helper()
	waitFact(t, s, 20*time.Second, fmt.Sprintf("the artifact marked reclaimable=%v", want), func(ctx context.Context, conn *pgx.Conn) bool {
		var marked bool
		err := conn.QueryRow(ctx, `SELECT reclaimable_since IS NOT NULL FROM deploys.deploys WHERE id = $1`, deployID).Scan(&marked)
		return err == nil && marked == want
	})
}
