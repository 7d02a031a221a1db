package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every parameter rule of the contract, through the route, with the exact status and body.
func TestLogsParameterRules(t *testing.T) {
	e := newEnv(t)
	e.newApp(t, "acc-week", "weekly")
	e.db.SavePlan(t, "acc-week", 7)
	e.newApp(t, "acc-day", "daily")
	e.db.SavePlan(t, "acc-day", 1)

	day := 24 * time.Hour
	at := func(d time.Duration) string { return rfc(testNow.Add(d)) }
	cases := []struct {
		name    string
		slug    string
		params  url.Values
		status  int
		code    string // error and code of the body; "" on 200
		message string // the parameter the message names
	}{
		{"defaults", "weekly", nil, 200, "", ""},
		{"exactly 24 hours", "weekly", url.Values{"start": {at(-2 * day)}, "end": {at(-day)}}, 200, "", ""},
		{"24 hours and one second", "weekly", url.Values{"start": {at(-2*day - time.Second)}, "end": {at(-day)}}, 400, "invalid_parameter", "end"},
		{"end before start", "weekly", url.Values{"start": {at(-time.Hour)}, "end": {at(-2 * time.Hour)}}, 400, "invalid_parameter", "end"},
		{"start equals end", "weekly", url.Values{"start": {at(-time.Hour)}, "end": {at(-time.Hour)}}, 200, "", ""},
		{"start not ISO 8601", "weekly", url.Values{"start": {"yesterday"}}, 400, "invalid_parameter", "start"},
		{"start without a zone", "weekly", url.Values{"start": {"2026-11-22T11:00:00"}}, 400, "invalid_parameter", "start"},
		{"end not ISO 8601", "weekly", url.Values{"end": {"2026-11-22 noon"}}, 400, "invalid_parameter", "end"},
		{"end with offset", "weekly", url.Values{"end": {"2026-11-22T13:00:00+01:00"}}, 200, "", ""},
		{"limit 1", "weekly", url.Values{"limit": {"1"}}, 200, "", ""},
		{"limit 500", "weekly", url.Values{"limit": {"500"}}, 200, "", ""},
		{"limit 0", "weekly", url.Values{"limit": {"0"}}, 400, "invalid_parameter", "limit"},
		{"limit 501", "weekly", url.Values{"limit": {"501"}}, 400, "invalid_parameter", "limit"},
		{"limit not an integer", "weekly", url.Values{"limit": {"1.5"}}, 400, "invalid_parameter", "limit"},
		{"limit not a number", "weekly", url.Values{"limit": {"all"}}, 400, "invalid_parameter", "limit"},
		{"cursor not ours", "weekly", url.Values{"cursor": {"%%%"}}, 400, "invalid_parameter", "cursor"},
		{"retention edge exactly", "daily", url.Values{"start": {at(-day)}, "end": {at(-day + time.Hour)}}, 200, "", ""},
		{"retention edge and one second", "daily", url.Values{"start": {at(-day - time.Second)}, "end": {at(-day + time.Hour)}}, 410, "beyond_retention", ""},
		{"a week back on seven days", "weekly", url.Values{"start": {at(-7 * day)}, "end": {at(-7*day + time.Hour)}}, 200, "", ""},
		{"past a week on seven days", "weekly", url.Values{"start": {at(-7*day - time.Second)}, "end": {at(-7*day + time.Hour)}}, 410, "beyond_retention", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.get(t, map[string]string{"weekly": "acc-week", "daily": "acc-day", "nope": "acc-week"}[tc.slug], tc.slug, tc.params)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			if tc.code == "" {
				if _, ok := r.Body["retentionDays"]; !ok {
					t.Fatalf("200 without retentionDays: %s", r.Raw)
				}
				return
			}
			if r.Body["error"] != tc.code || r.Body["code"] != tc.code {
				t.Fatalf("body %s, want error and code %q", r.Raw, tc.code)
			}
			msg, _ := r.Body["message"].(string)
			if tc.message != "" && !strings.HasPrefix(msg, tc.message+":") {
				t.Fatalf("message %q does not name %s", msg, tc.message)
			}
		})
	}
}

// An unknown, foreign or deleted app is 404 whatever the query says: the contract gives such
// a slug no other answer.
func TestUnknownAppIsNotFoundBeforeTheParametersAreJudged(t *testing.T) {
	e := newEnv(t)
	e.newApp(t, "acc-week", "weekly")
	for _, params := range []url.Values{{"limit": {"0"}}, {"start": {"yesterday"}}, {}} {
		for account, slug := range map[string]string{"acc-week": "nope", "acc-day": "weekly"} {
			r := e.get(t, account, slug, params)
			if r.Status != 404 || r.Body["error"] != "not found" {
				t.Fatalf("%s of %s with %v: %d %s, want 404 not found", slug, account, params, r.Status, r.Raw)
			}
		}
	}
}
