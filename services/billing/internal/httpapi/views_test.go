package httpapi

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"tori.dev/contract/billinghold"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/mirror"
	"tori.dev/services/billing/internal/usecase"
)

// apiTime is the only form a time may take in an answer (docs/conventions.md): RFC 3339, UTC,
// milliseconds.
var apiTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// Every time in GET /api/billing's answer is in the API's form, with milliseconds, even when
// the mirror holds microseconds (Postgres keeps them) or a local offset.
func TestBillingAnswersCarryMillisecondsNotMicroseconds(t *testing.T) {
	micro := time.Date(2026, 11, 22, 3, 30, 0, 123456000, time.FixedZone("CET", 3600))
	held := billinghold.From(micro)
	st := usecase.State{
		Configured:   true,
		Catalog:      catalog.All(),
		Subscription: &mirror.Subscription{Status: "active", Plan: catalog.Songbird, Interval: catalog.Monthly, CurrentPeriodStart: micro, CurrentPeriodEnd: micro.AddDate(0, 1, 0)},
		Invoices: []mirror.Invoice{{ID: "in_1", Number: "T-1", Status: "open", Currency: "eur", Created: micro,
			CreditNotes: []mirror.CreditNote{{ID: "cn_1", Number: "T-1-CN", Created: micro}}}},
		Hold:  &held,
		Stage: held.StageAt(micro),
	}
	body, err := json.Marshal(toBillingView(st))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	times := map[string]string{}
	collectTimes(v, "$", times)
	for _, path := range []string{"$.subscription.currentPeriodStart", "$.subscription.currentPeriodEnd", "$.invoices[].createdAt",
		"$.invoices[].creditNotes[].createdAt", "$.hold.since", "$.hold.deploysRefusedFrom", "$.hold.servingStopsFrom", "$.hold.reclaimableFrom"} {
		got, ok := times[path]
		if !ok {
			t.Errorf("%s: no time in %s", path, body)
			continue
		}
		if !apiTime.MatchString(got) {
			t.Errorf("%s = %q, want RFC 3339 UTC with milliseconds", path, got)
		}
	}
	if times["$.hold.since"] != "2026-11-22T02:30:00.123Z" {
		t.Errorf("hold since %q, want 2026-11-22T02:30:00.123Z", times["$.hold.since"])
	}
}

// collectTimes records every string in v that parses as an RFC 3339 time, by its path.
func collectTimes(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			collectTimes(e, path+"."+k, out)
		}
	case []any:
		for _, e := range x {
			collectTimes(e, path+"[]", out)
		}
	case string:
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			out[path] = x
		}
	}
}
