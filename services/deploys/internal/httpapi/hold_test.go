package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/contract/billinghold"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// From day 7 of a payment-failure hold new deploys get 402 billing_hold with the hold's
// dates; rollbacks still go through; once billing lifts the hold, deploys go through again.
func TestBillingHoldRefusesNewDeploysButNotRollbacks(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	e.addApp(e.account, "svc", "service")
	a := e.deployStatic("site", "a")
	e.goLive(a)

	day := 24 * time.Hour
	since := e.clock.Now().Add(-3 * day)
	hold := deploy.Hold{Active: true, Hold: billinghold.From(since), Version: 1}
	save := func(h deploy.Hold) {
		t.Helper()
		if err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error { return e.svc.SaveHold(context.Background(), tx, e.account, h) }); err != nil {
			t.Fatal(err)
		}
	}
	save(hold)
	// Day 3: told, nothing refused.
	b := e.deployStatic("site", "b")
	e.goLive(b)

	e.clock.Advance(5 * day) // day 8
	rows := e.rows()
	status, body, _ := e.upload(e.account, "site", file("index.html", "c"))
	if status != http.StatusPaymentRequired || body["error"] != "billing_hold" || body["code"] != "billing_hold" {
		t.Fatalf("deploy under hold: %d %v", status, body)
	}
	h, _ := body["hold"].(map[string]any)
	if h == nil || h["stage"] != "deploys_refused" || h["since"] != apitime.Format(since) ||
		h["deploysRefusedFrom"] != apitime.Format(since.Add(7*day)) || h["servingStopsFrom"] != apitime.Format(since.Add(14*day)) ||
		h["reclaimableFrom"] != apitime.Format(since.Add(30*day)) {
		t.Fatalf("hold in the 402: %v", body["hold"])
	}
	status, body, _ = e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
	if status != http.StatusPaymentRequired || body["error"] != "billing_hold" {
		t.Fatalf("image deploy under hold: %d %v", status, body)
	}
	e.assertNothingBehind(rows)

	status, body, _ = e.request(e.account, "POST", "/api/apps/site/deploys/"+a+"/rollback", "", nil, 0)
	if status != http.StatusCreated || body["rollbackOf"] != a {
		t.Fatalf("rollback under hold: %d %v", status, body)
	}

	save(deploy.Hold{Active: false, Version: 2}) // the invoice is paid
	if status, body, _ := e.upload(e.account, "site", file("index.html", "d")); status != http.StatusCreated {
		t.Fatalf("deploy after payment: %d %v", status, body)
	}
}
