package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/stripepay"
	"tori.dev/services/billing/internal/stripepay/stripetest"
	"tori.dev/services/billing/internal/usecase"
)

// newPaidFixture is billing with paid plans on, its Stripe adapter pointed at stripe-mock.
func newPaidFixture(t *testing.T) fixture {
	t.Helper()
	pool := testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
	st := store.New(pool)
	svc := usecase.New(st, usecase.WithPayments(usecase.Payments{
		Provider: stripepay.New(stripepay.Config{SecretKey: "sk_test_tori", APIURL: testinfra.StripeMock(t)}),
		Prices: usecase.Prices{
			{Plan: catalog.Songbird, Interval: catalog.Monthly}: "price_songbird_month",
			{Plan: catalog.Songbird, Interval: catalog.Yearly}:  "price_songbird_year",
			{Plan: catalog.Flock, Interval: catalog.Monthly}:    "price_flock_month",
			{Plan: catalog.Flock, Interval: catalog.Yearly}:     "price_flock_year",
		},
		Events:     stripepay.Events{Secret: "whsec_tori"},
		ConsoleURL: "http://console.test",
	}))
	app := httpapi.New(httpapi.Deps{
		Billing:    svc,
		SigningKey: key,
		DB:         pool,
		Health:     health.NewIdentity("billing", "test"),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return fixture{app: app, svc: svc, st: st, pool: pool}
}

func urlFrom(t *testing.T, status int, body string) string {
	t.Helper()
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var v struct{ URL string }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if u, err := url.Parse(v.URL); err != nil || !u.IsAbs() {
		t.Fatalf("url %q in %s", v.URL, body)
	}
	return v.URL
}

func TestPaidCheckoutPortalAndSyncAgainstStripeMock(t *testing.T) {
	t.Parallel()
	f := newPaidFixture(t)
	doc := loadFragment(t)
	id := f.account(t)
	user := userOf(id)

	// Before any customer: configured, customer null.
	status, body := do(t, f.app, request("GET", "/api/billing", "", user, key))
	want := `{"plan":"nestling","customer":null,"subscription":null,"invoices":[],"catalog":` + plansJSON + `,"configured":true,"hold":null}`
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	sameJSON(t, body, want)

	status, body = do2(t, f, "POST", "/api/billing/checkout", `{"plan":"songbird","interval":"month"}`, user)
	urlFrom(t, status, body)
	status, body = do2(t, f, "POST", "/api/billing/portal", "", user)
	urlFrom(t, status, body)
	for _, bad := range []struct{ body, code string }{
		{`{"plan":"nestling","interval":"month"}`, "invalid_plan"},
		{`{"plan":"flock","interval":"week"}`, "invalid_interval"},
	} {
		status, body := do2(t, f, "POST", "/api/billing/checkout", bad.body, user)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(body), &e)
		if status != 400 || e.Error != bad.code {
			t.Fatalf("%s: %d %s", bad.body, status, body)
		}
	}

	// sync reads stripe-mock's customer, subscriptions and invoices; its answer is the
	// billing shape, customer included.
	status, body = do2(t, f, "POST", "/api/billing/sync", "", user)
	if status != 200 {
		t.Fatalf("sync: %d %s", status, body)
	}
	var v any
	_ = json.Unmarshal([]byte(body), &v)
	if err := conforms(doc, &schema{Ref: "#/components/schemas/BillingState"}, v, "$"); err != nil {
		t.Fatal(err)
	}
	var state struct {
		Configured bool
		Customer   *struct{ Business bool }
		Invoices   []struct{ ID string }
	}
	_ = json.Unmarshal([]byte(body), &state)
	if !state.Configured || state.Customer == nil || len(state.Invoices) == 0 {
		t.Fatalf("sync answered %s", body)
	}

	// A subscription in Tori's mirror (as a webhook would record it) makes checkout 409.
	now := time.Now().UTC().Truncate(time.Second)
	c, err := f.st.Customer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.InTx(ctx, func(tx usecase.Tx) error {
		_, err := tx.PutSubscription(ctx, mirror.Subscription{ID: "sub_" + uuid.NewString(), AccountID: id, CustomerID: c.CustomerID,
			Plan: catalog.Songbird, Interval: catalog.Monthly, Status: "active", Created: now, ObservedAt: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	status, body = do2(t, f, "POST", "/api/billing/checkout", `{"plan":"flock","interval":"year"}`, user)
	if status != 409 {
		t.Fatalf("checkout while subscribed: %d %s", status, body)
	}
	sameJSON(t, body, `{"error":"already_subscribed","code":"already_subscribed","message":"the account has a subscription; change plans in the billing portal"}`)
}

func do2(t *testing.T, f fixture, method, path, body string, caller callerid.Caller) (int, string) {
	t.Helper()
	return do(t, f.app, request(method, path, body, caller, key))
}

func TestWebhookVerifiesTheRawBodyAndAppliesOnce(t *testing.T) {
	t.Parallel()
	f := newPaidFixture(t)
	id := f.account(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	body := stripetest.Event(stripetest.EventID(), "customer.subscription.created", t0,
		stripetest.Subscription("sub_"+id.String(), "cus_"+id.String(), id, "price_flock_month", "active", false, t0, t0.AddDate(0, 1, 0)))
	webhook := func(payload []byte, sig string) (int, string) {
		req := request("POST", "/api/billing/webhook", string(payload), callerid.Caller{}, key)
		if sig != "" {
			req.Header.Set("Stripe-Signature", sig)
		}
		return do(t, f.app, req)
	}
	// Tampered: one byte of whitespace changes nothing a JSON reader sees, yet the signature
	// no longer holds.
	status, resp := webhook(append(append([]byte{}, body...), ' '), stripetest.Sign(body, "whsec_tori"))
	if status != 400 {
		t.Fatalf("tampered: %d %s", status, resp)
	}
	sameJSON(t, resp, `{"error":"invalid_signature","code":"invalid_signature","message":"the webhook signature does not verify"}`)
	if status, resp = webhook(body, ""); status != 400 {
		t.Fatalf("unsigned: %d %s", status, resp)
	}
	for range 2 {
		status, resp = webhook(body, stripetest.Sign(body, "whsec_tori"))
		if status != 200 {
			t.Fatalf("signed: %d %s", status, resp)
		}
		sameJSON(t, resp, `{"received":true}`)
	}
	a, err := f.svc.AccountPlan(ctx, id)
	if err != nil || a.Plan != catalog.Flock || a.Version != 2 {
		t.Fatalf("account %+v, %v", a, err)
	}
}

func TestWebhookWhileBillingIsOffIs503(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body := stripetest.Event(stripetest.EventID(), "invoice.paid", time.Now(), map[string]any{"id": "in_1", "object": "invoice"})
	req := request("POST", "/api/billing/webhook", string(body), callerid.Caller{}, key)
	req.Header.Set("Stripe-Signature", stripetest.Sign(body, "whsec_tori"))
	status, resp := do(t, f.app, req)
	if status != 503 {
		t.Fatalf("status %d: %s", status, resp)
	}
	sameJSON(t, resp, `{"error":"billing_unavailable","code":"billing_unavailable","message":"paid plans are not enabled yet"}`)
}

func TestHoldShowsInBillingWithItsDates(t *testing.T) {
	t.Parallel()
	f := newPaidFixture(t)
	id := f.account(t)
	user := userOf(id)
	if status, body := do2(t, f, "POST", "/api/billing/portal", "", user); status != 200 {
		t.Fatalf("portal: %d %s", status, body)
	}
	c, err := f.st.Customer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().UTC().Add(-8 * 24 * time.Hour).Truncate(time.Second)
	body := stripetest.Event(stripetest.EventID(), "invoice.payment_failed", since,
		stripetest.Invoice("in_"+id.String(), c.CustomerID, "sub_1", id, "T-7", "open", 900, 156, since))
	req := request("POST", "/api/billing/webhook", string(body), callerid.Caller{}, key)
	req.Header.Set("Stripe-Signature", stripetest.Sign(body, "whsec_tori"))
	if status, resp := do(t, f.app, req); status != 200 {
		t.Fatalf("webhook: %d %s", status, resp)
	}
	status, resp := do2(t, f, "GET", "/api/billing", "", user)
	if status != 200 {
		t.Fatalf("billing: %d %s", status, resp)
	}
	var v any
	_ = json.Unmarshal([]byte(resp), &v)
	if err := conforms(loadFragment(t), &schema{Ref: "#/components/schemas/BillingState"}, v, "$"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hold struct {
			Since, DeploysRefusedFrom, ServingStopsFrom, ReclaimableFrom time.Time
			Stage                                                        string
		}
		Invoices []struct {
			Number  string
			VATRate float64
		}
	}
	_ = json.Unmarshal([]byte(resp), &got)
	h := got.Hold
	if !h.Since.Equal(since) || h.Stage != "deploys_refused" || !h.DeploysRefusedFrom.Equal(since.Add(7*24*time.Hour)) ||
		!h.ServingStopsFrom.Equal(since.Add(14*24*time.Hour)) || !h.ReclaimableFrom.Equal(since.Add(30*24*time.Hour)) {
		t.Fatalf("hold %+v in %s", h, resp)
	}
	if len(got.Invoices) != 1 || got.Invoices[0].Number != "T-7" || got.Invoices[0].VATRate != 21 {
		t.Fatalf("invoices %+v", got.Invoices)
	}
}
