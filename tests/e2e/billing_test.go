package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/contract/apitime"
	"tori.dev/tests/e2e/harness"
)

const e2eWebhookSecret = "whsec_e2e_tori"

// paidStack is the control plane with paid plans on, billing's Stripe client pointed at
// stripe-mock. stripe-mock sends no webhooks: the test writes and signs the events Stripe
// would send.
func paidStack(t *testing.T, extra ...string) *harness.Stack {
	mock := harness.StripeMock(t)
	// A FAKE VIES: nothing in the tests reaches the real one. It confirms no VAT ID.
	vies := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"valid":false}`))
	}))
	t.Cleanup(vies.Close)
	env := map[string]string{
		"VIES_URL":                    vies.URL,
		"AUTH_LIMIT_PER_15MIN":        "100000",
		"BILLING_HOLD_NOTICE_EVERY":   "200ms",
		"STRIPE_SECRET_KEY":           "sk_test_e2e",
		"STRIPE_WEBHOOK_SECRET":       e2eWebhookSecret,
		"STRIPE_API_URL":              mock,
		"STRIPE_PRICE_SONGBIRD_MONTH": "price_songbird_month",
		"STRIPE_PRICE_SONGBIRD_YEAR":  "price_songbird_year",
		"STRIPE_PRICE_FLOCK_MONTH":    "price_flock_month",
		"STRIPE_PRICE_FLOCK_YEAR":     "price_flock_year",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return harness.Start(t, harness.Options{Env: env})
}

// accountID reads the account's id from billing's own table: the API does not show it, and
// every provider object carries it as metadata.account_id.
func accountID(t *testing.T, s *harness.Stack, email string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id string
	harness.Eventually(t, 15*time.Second, "billing to record the account", func() bool {
		err := conn.QueryRow(ctx, `SELECT account_id::text FROM billing.account_plans WHERE email = $1`, email).Scan(&id)
		return err == nil
	})
	return id
}

// holdCopy waits until the deploys service's copy of the account's hold is active (or not):
// billing announces it over the bus, and the copy is where a deploy is refused.
func holdCopy(t *testing.T, s *harness.Stack, account string, active bool) {
	t.Helper()
	waitFact(t, s, 15*time.Second, fmt.Sprintf("deploys' hold copy to be active=%v", active), func(ctx context.Context, conn *pgx.Conn) bool {
		var got bool
		err := conn.QueryRow(ctx, `SELECT active FROM deploys.billing_holds WHERE account_id = $1`, account).Scan(&got)
		return err == nil && got == active
	})
}

// waitFact waits up to within until check, reading the stack's database as its admin, holds.
func waitFact(t *testing.T, s *harness.Stack, within time.Duration, what string, check func(context.Context, *pgx.Conn) bool) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	harness.Eventually(t, within, what, func() bool { return check(ctx, conn) })
}

type stripeEvent struct {
	ID      string
	Type    string
	Created time.Time
	Object  map[string]any
}

func (e stripeEvent) body() []byte {
	b, _ := json.Marshal(map[string]any{
		"id": e.ID, "object": "event", "type": e.Type, "created": e.Created.Unix(), "livemode": false,
		"api_version": "2026-03-25.dahlia", "data": map[string]any{"object": e.Object},
	})
	return b
}

func deliver(t *testing.T, s *harness.Stack, payload []byte, signature string) *harness.Response {
	t.Helper()
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/billing/webhook", Body: payload,
		Header: map[string]string{"Stripe-Signature": signature, "Content-Type": "application/json"}})
}

func send(t *testing.T, s *harness.Stack, e stripeEvent) {
	t.Helper()
	body := e.body()
	if r := deliver(t, s, body, harness.StripeSignature(body, e2eWebhookSecret, time.Now())); r.Status != http.StatusOK {
		t.Fatalf("webhook %s: %d %s", e.Type, r.Status, r.Body)
	}
}

func subscriptionObject(account, price, status string, start time.Time) map[string]any {
	return map[string]any{
		"id": "sub_" + account, "object": "subscription", "customer": "cus_" + account, "status": status,
		"cancel_at_period_end": false, "created": start.Unix(), "metadata": map[string]any{"account_id": account},
		"items": map[string]any{"object": "list", "data": []any{map[string]any{
			"id": "si_" + account, "object": "subscription_item", "price": map[string]any{"id": price, "object": "price"},
			"current_period_start": start.Unix(), "current_period_end": start.AddDate(0, 1, 0).Unix(),
		}}},
	}
}

func invoiceObject(account, status string, created time.Time) map[string]any {
	return map[string]any{
		"id": "in_" + account, "object": "invoice", "customer": "cus_" + account, "number": "TORI-E2E-1", "status": status,
		"total": 2900, "currency": "eur", "created": created.Unix(),
		"hosted_invoice_url": "https://invoice.stripe.test/in_1", "invoice_pdf": "https://invoice.stripe.test/in_1.pdf",
		"total_taxes": []any{map[string]any{"amount": 503, "taxable_amount": 2397}},
		"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{
			"metadata": map[string]any{"account_id": account}, "subscription": "sub_" + account}},
	}
}

func TestBillingWithStripeMock(t *testing.T) {
	s := paidStack(t)
	a := s.NewAccount(t, "payer")
	id := accountID(t, s, a.Email)

	b := s.Get(t, "/api/billing", a.Token)
	bm := b.Map(t)
	if b.Status != http.StatusOK || bm["configured"] != true || bm["customer"] != nil || bm["subscription"] != nil || bm["hold"] != nil {
		t.Fatalf("billing before checkout: %d %s", b.Status, b.Body)
	}
	expectKeys(t, "billing", bm, "plan", "customer", "subscription", "invoices", "catalog", "configured", "hold")

	for _, path := range []string{"/api/billing/checkout", "/api/billing/portal"} {
		r := post(s, t, path, a.Token, map[string]string{"plan": "flock", "interval": "month"})
		if r.Status != http.StatusOK || r.Map(t)["url"] == "" {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	expectError(t, post(s, t, "/api/billing/checkout", a.Token, map[string]string{"plan": "nestling", "interval": "month"}), http.StatusBadRequest, "invalid_plan")
	expectError(t, post(s, t, "/api/billing/checkout", a.Token, map[string]string{"plan": "flock", "interval": "week"}), http.StatusBadRequest, "invalid_interval")
	if r := post(s, t, "/api/billing/sync", a.Token, nil); r.Status != http.StatusOK || r.Map(t)["customer"] == nil {
		t.Fatalf("sync: %d %s", r.Status, r.Body)
	}

	start := time.Now().Add(-time.Hour)
	subscribed := stripeEvent{ID: "evt_sub_" + id, Type: "customer.subscription.created", Created: start,
		Object: subscriptionObject(id, "price_flock_month", "active", start)}

	t.Run("a tampered signature is 400 and changes nothing", func(t *testing.T) {
		body := subscribed.body()
		sig := harness.StripeSignature(body, e2eWebhookSecret, time.Now())
		tampered := append(append([]byte{}, body...), ' ')
		expectError(t, deliver(t, s, tampered, sig), http.StatusBadRequest, "invalid_signature")
		expectError(t, deliver(t, s, body, harness.StripeSignature(body, "whsec_someone_else", time.Now())), http.StatusBadRequest, "invalid_signature")
		expectError(t, deliver(t, s, body, harness.StripeSignature(body, e2eWebhookSecret, time.Now().Add(-6*time.Minute))), http.StatusBadRequest, "invalid_signature")
		if p := s.Get(t, "/api/billing", a.Token).Map(t)["plan"]; p != "nestling" {
			t.Fatalf("plan %v after refused deliveries", p)
		}
	})

	t.Run("a subscription moves the plan and its limits", func(t *testing.T) {
		// On nestling: no custom hostname, logs kept a day.
		site := createApp(t, s, a.Token, "static")
		domains := "/api/apps/" + site + "/domains"
		expectError(t, post(s, t, domains, a.Token, map[string]string{"hostname": site + ".example.com"}), http.StatusForbidden, "domain_limit_reached")
		retention := func() any { return s.Get(t, "/api/apps/"+site+"/logs", a.Token).Map(t)["retentionDays"] }
		if r := retention(); r != float64(1) {
			t.Fatalf("nestling's retention %v", r)
		}
		send(t, s, subscribed)
		harness.Eventually(t, 15*time.Second, "flock to reach the account", func() bool {
			acc := s.Get(t, "/api/account", a.Token).Map(t)
			return acc["plan"] == "flock" && acc["limits"].(map[string]any)["maxCustomDomains"] == float64(50)
		})
		// The new limits hold in the other services' copies too: apps (custom hostnames)
		// and logs (retention).
		harness.Eventually(t, 15*time.Second, "the apps service to allow a custom hostname", func() bool {
			return post(s, t, domains, a.Token, map[string]string{"hostname": site + ".example.com"}).Status == http.StatusCreated
		})
		harness.Eventually(t, 15*time.Second, "the logs service to keep flock's 30 days", func() bool { return retention() == float64(30) })
		bm := s.Get(t, "/api/billing", a.Token).Map(t)
		sub, _ := bm["subscription"].(map[string]any)
		if bm["plan"] != "flock" || sub == nil || sub["plan"] != "flock" || sub["status"] != "active" || sub["interval"] != "month" {
			t.Fatalf("billing %v", bm)
		}
		expectError(t, post(s, t, "/api/billing/checkout", a.Token, map[string]string{"plan": "songbird", "interval": "year"}), http.StatusConflict, "already_subscribed")
	})

	t.Run("the same event twice has one effect", func(t *testing.T) {
		canceled := stripeEvent{ID: "evt_del_" + id, Type: "customer.subscription.deleted", Created: start.Add(time.Minute),
			Object: subscriptionObject(id, "price_flock_month", "canceled", start)}
		send(t, s, canceled)
		harness.Eventually(t, 15*time.Second, "nestling to reach the account", func() bool {
			return s.Get(t, "/api/account", a.Token).Map(t)["plan"] == "nestling"
		})
		// The first event again, even dated later, is not applied a second time.
		again := subscribed
		again.Created = time.Now()
		send(t, s, again)
		if bm := s.Get(t, "/api/billing", a.Token).Map(t); bm["plan"] != "nestling" || bm["subscription"].(map[string]any)["status"] != "canceled" {
			t.Fatalf("a repeated event was applied again: %v", bm)
		}
	})

	t.Run("a failed payment holds the account with its dates, and payment lifts it", func(t *testing.T) {
		// A live static site, to roll back to under the hold.
		slug := createApp(t, s, a.Token, "static")
		r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v1"})
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		v1 := r.Map(t)["id"].(string)
		waitStatus(t, s, a.Token, slug, v1, "live")

		mails := s.SMTP.Count(a.Email)
		since := time.Now().Add(-8 * 24 * time.Hour).Truncate(time.Second)
		send(t, s, stripeEvent{ID: "evt_fail_" + id, Type: "invoice.payment_failed", Created: since, Object: invoiceObject(id, "open", since)})
		holdCopy(t, s, id, true)
		// Day 0's mail, late rather than never: billing learnt of the failure on day 8.
		m, ok := s.SMTP.WaitFor(a.Email, mails, 30*time.Second)
		if !ok || !strings.Contains(m.Data, "a payment failed") || !strings.Contains(m.Data, since.UTC().Format("2006-01-02 15:04 UTC")) {
			t.Fatalf("no day-0 mail (ok %v): %s", ok, m.Data)
		}
		r = deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v2"})
		e := expectError(t, r, http.StatusPaymentRequired, "billing_hold")
		var withHold struct{ Hold map[string]any }
		r.JSON(t, &withHold)
		if e.Code != "billing_hold" || withHold.Hold["stage"] != "deploys_refused" || withHold.Hold["since"] != apitime.Format(since) ||
			withHold.Hold["servingStopsFrom"] != apitime.Format(since.Add(14*24*time.Hour)) {
			t.Fatalf("402: %s", r.Body)
		}
		r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + v1 + "/rollback", Token: a.Token})
		if r.Status != http.StatusCreated {
			t.Fatalf("rollback under hold: %d %s", r.Status, r.Body)
		}
		waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")

		bm := s.Get(t, "/api/billing", a.Token).Map(t)
		h, _ := bm["hold"].(map[string]any)
		if h == nil || h["stage"] != "deploys_refused" || h["since"] != apitime.Format(since) ||
			h["deploysRefusedFrom"] != apitime.Format(since.Add(7*24*time.Hour)) {
			t.Fatalf("hold %v", bm["hold"])
		}
		// Besides stripe-mock's own fixture invoice, which sync mirrored earlier.
		var mine map[string]any
		for _, inv := range bm["invoices"].([]any) {
			if m := inv.(map[string]any); m["number"] == "TORI-E2E-1" {
				mine = m
			}
		}
		if mine == nil || mine["vatRate"] != float64(21) || mine["total"] != float64(2900) || mine["status"] != "open" || mine["currency"] != "EUR" {
			t.Fatalf("invoices %v", bm["invoices"])
		}
		send(t, s, stripeEvent{ID: "evt_paid_" + id, Type: "invoice.paid", Created: time.Now(), Object: invoiceObject(id, "paid", since)})
		if bm := s.Get(t, "/api/billing", a.Token).Map(t); bm["hold"] != nil {
			t.Fatalf("hold after payment: %v", bm["hold"])
		}
		holdCopy(t, s, id, false)
		if r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v3"}); r.Status != http.StatusCreated {
			t.Fatalf("deploy after payment: %d %s", r.Status, r.Body)
		}
	})
}

// A subscription's plan change redeploys a running service: a new revision of the same source,
// started with the new plan's resources, goes live in place of the old one.
func TestPaidPlanChangeRedeploysRunningServices(t *testing.T) {
	s := paidStack(t, "DEPLOYS_SWEEP_EVERY", "1s")
	a := s.NewAccount(t, "redeploy")
	id := accountID(t, s, a.Email)
	slug := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"p"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	v1 := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, v1, "live")

	start := time.Now().Add(-time.Minute)
	send(t, s, stripeEvent{ID: "evt_up_" + id, Type: "customer.subscription.created", Created: start,
		Object: subscriptionObject(id, "price_songbird_month", "active", start)})
	var redeploy map[string]any
	harness.Eventually(t, 90*time.Second, "a new revision to go live after the plan change", func() bool {
		var list []map[string]any
		s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &list)
		if len(list) < 2 || list[0]["id"] == v1 || list[0]["status"] != "live" {
			return false
		}
		redeploy = list[0]
		return true
	})
	if redeploy["rollbackOf"] != nil || redeploy["kind"] != "source" {
		t.Fatalf("redeploy %v", redeploy)
	}
	if got := s.Get(t, "/api/apps/"+slug+"/deploys/"+v1, a.Token).Map(t)["status"]; got != "superseded" {
		t.Fatalf("the old revision is %v", got)
	}
	waitEdge(t, s, slug, "/", "none unreleased p")
}
