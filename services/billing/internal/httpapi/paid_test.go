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
	"tori.dev/services/billing/internal/app"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/stripemock"
	"tori.dev/services/billing/internal/stripepay"
)

// newPaidFixture is billing with paid plans on, its Stripe adapter pointed at stripe-mock.
func newPaidFixture(t *testing.T) fixture {
	t.Helper()
	st := store.New(testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations))
	svc := app.New(st, app.WithPayments(app.Payments{
		Provider: stripepay.New(stripepay.Config{SecretKey: "sk_test_tori", APIURL: stripemock.Start(t)}),
		Prices: app.Prices{
			{Plan: catalog.Songbird, Interval: catalog.Monthly}: "price_songbird_month",
			{Plan: catalog.Songbird, Interval: catalog.Yearly}:  "price_songbird_year",
			{Plan: catalog.Flock, Interval: catalog.Monthly}:    "price_flock_month",
			{Plan: catalog.Flock, Interval: catalog.Yearly}:     "price_flock_year",
		},
		ConsoleURL: "http://console.test",
	}))
	app := httpapi.New(httpapi.Deps{
		Billing:    svc,
		SigningKey: key,
		Health:     health.NewIdentity("billing", "test"),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return fixture{app: app, svc: svc, st: st}
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
	if err := f.st.InTx(ctx, func(tx app.Tx) error {
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
