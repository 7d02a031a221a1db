package httpapi_test

import (
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	"tori.dev/services/logs/internal/logs"
)

func TestLogsResponseShape(t *testing.T) {
	e := newEnv(t)
	app := e.newApp(t, "acc", "web")
	e.db.SavePlan(t, "acc", 7)
	deploy := uuid.NewString()
	t0 := testNow.Add(-10 * time.Minute)
	e.db.Seed(t, []logs.Entry{
		{AppID: app.ID, DeployID: deploy, Stream: logs.StreamStdout, Process: "web.1", Timestamp: t0.Add(time.Second + 123456*time.Microsecond), Message: "second"},
		{AppID: app.ID, Stream: logs.StreamSystem, Timestamp: t0, Message: "first"},
	})

	r := e.get(t, "acc", "web", nil)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	wantKeys(t, r.Body, "retentionDays", "start", "end", "entries", "next")
	if r.Body["retentionDays"] != float64(7) || r.Body["next"] != nil {
		t.Fatalf("retentionDays/next: %s", r.Raw)
	}
	if r.Body["start"] != "2026-11-22T11:00:00.000Z" || r.Body["end"] != "2026-11-22T12:00:00.000Z" {
		t.Fatalf("window: %s", r.Raw)
	}
	entries := r.Body["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("entries: %s", r.Raw)
	}
	first, second := entries[0].(map[string]any), entries[1].(map[string]any)
	wantKeys(t, first, "id", "timestamp", "stream", "deployId", "message", "process")
	if first["message"] != "first" || first["deployId"] != nil || first["process"] != nil || first["stream"] != "system" || first["timestamp"] != "2026-11-22T11:50:00.000Z" {
		t.Fatalf("oldest first, no deploy: %v", first)
	}
	if second["deployId"] != deploy || second["timestamp"] != "2026-11-22T11:50:01.123Z" || second["stream"] != "stdout" || second["process"] != "web.1" {
		t.Fatalf("second entry: %v", second)
	}
	if _, err := strconv.ParseInt(first["id"].(string), 10, 64); err != nil {
		t.Fatalf("id %v is not a decimal string", first["id"])
	}

	// An empty window still answers the full shape, with an empty list rather than null.
	r = e.get(t, "acc", "web", url.Values{"end": {rfc(testNow.Add(-2 * time.Hour))}})
	if r.Status != 200 || r.Raw == "" || r.Body["entries"] == nil || len(r.Body["entries"].([]any)) != 0 {
		t.Fatalf("empty window: %s", r.Raw)
	}
}

func wantKeys(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	if len(m) != len(keys) {
		t.Fatalf("keys %v, want exactly %v", m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Fatalf("missing %q in %v", k, m)
		}
	}
}

// Many entries sharing one timestamp must page without a skip or a repeat; start is
// inclusive and end exclusive.
func TestLogsPagingAcrossOneTimestamp(t *testing.T) {
	e := newEnv(t)
	app := e.newApp(t, "acc", "web")
	other := e.newApp(t, "acc", "other")
	e.db.SavePlan(t, "acc", 7)
	start := testNow.Add(-30 * time.Minute)
	end := testNow.Add(-10 * time.Minute)
	same := testNow.Add(-20 * time.Minute)

	var seed []logs.Entry
	seed = append(seed, entriesAt(app.ID, start.Add(-time.Microsecond), 3)...) // before the window
	seed = append(seed, entriesAt(app.ID, start, 2)...)                        // on start: in
	seed = append(seed, entriesAt(app.ID, same, 1000)...)
	seed = append(seed, entriesAt(other.ID, same, 50)...) // another app at the same moment
	seed = append(seed, entriesAt(app.ID, end.Add(-time.Microsecond), 2)...)
	seed = append(seed, entriesAt(app.ID, end, 3)...) // on end: out
	e.db.Seed(t, seed)
	const want = 2 + 1000 + 2

	for _, limit := range []int{1, 7, 500} {
		t.Run("limit "+strconv.Itoa(limit), func(t *testing.T) {
			seen := map[string]bool{}
			var last string
			cursor := ""
			pages := 0
			for {
				params := url.Values{"start": {rfc(start)}, "end": {rfc(end)}, "limit": {strconv.Itoa(limit)}}
				if cursor != "" {
					params.Set("cursor", cursor)
				}
				r := e.get(t, "acc", "web", params)
				if r.Status != 200 {
					t.Fatalf("status %d: %s", r.Status, r.Raw)
				}
				pages++
				entries := r.Body["entries"].([]any)
				if len(entries) > limit {
					t.Fatalf("page of %d over limit %d", len(entries), limit)
				}
				for _, x := range entries {
					m := x.(map[string]any)
					id := m["id"].(string)
					if seen[id] {
						t.Fatalf("entry %s repeated", id)
					}
					seen[id] = true
					key := m["timestamp"].(string) + "/" + pad(id)
					if key <= last {
						t.Fatalf("out of order: %s after %s", key, last)
					}
					last = key
				}
				next, _ := r.Body["next"].(string)
				if next == "" {
					break
				}
				cursor = next
			}
			if len(seen) != want {
				t.Fatalf("saw %d entries over %d pages, want %d", len(seen), pages, want)
			}
			if wantPages := (want + limit - 1) / limit; pages != wantPages {
				t.Fatalf("%d pages, want %d: next must be null once the span is exhausted", pages, wantPages)
			}
		})
	}
}

func pad(id string) string { return string(make([]byte, 20-len(id))) + id }

func TestLogsIsolationAndAuth(t *testing.T) {
	e := newEnv(t)
	mine := e.newApp(t, "acc-a", "mine")
	theirs := e.newApp(t, "acc-b", "theirs")
	e.db.Seed(t, entriesAt(theirs.ID, testNow.Add(-time.Minute), 3))
	e.db.Seed(t, entriesAt(mine.ID, testNow.Add(-time.Minute), 1))

	for _, tc := range []struct {
		name, account, slug string
	}{
		{"another account's app", "acc-a", "theirs"},
		{"unknown slug", "acc-a", "ghost"},
		{"not a slug at all", "acc-a", "UPPER%20case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.get(t, tc.account, tc.slug, nil)
			if r.Status != 404 || r.Body["error"] != "not found" || len(r.Body) != 1 {
				t.Fatalf("want 404 not found, got %d %s", r.Status, r.Raw)
			}
		})
	}

	t.Run("owner reads", func(t *testing.T) {
		r := e.get(t, "acc-b", "theirs", nil)
		if r.Status != 200 || len(r.Body["entries"].([]any)) != 3 {
			t.Fatalf("owner: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("same slug, other account's entries never mix", func(t *testing.T) {
		e.newApp(t, "acc-a", "theirs-too")
		r := e.get(t, "acc-a", "mine", nil)
		if r.Status != 200 || len(r.Body["entries"].([]any)) != 1 {
			t.Fatalf("mine: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("no gateway signature", func(t *testing.T) {
		r := e.do(t, httptest.NewRequest("GET", "/api/apps/mine/logs", nil))
		if r.Status != 401 || r.Body["error"] != "unauthorized" {
			t.Fatalf("unsigned: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("signed but anonymous", func(t *testing.T) {
		r := e.get(t, "", "mine", nil)
		if r.Status != 401 {
			t.Fatalf("anonymous: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("signature for another path", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/api/apps/theirs/logs", nil)
		callerid.Sign(signingKey, req.Header.Set, callerid.Caller{AccountID: "acc-a"}, "GET", req.Host, "/api/apps/mine/logs", time.Now())
		if r := e.do(t, req); r.Status != 401 {
			t.Fatalf("replayed signature: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("healthz needs no signature", func(t *testing.T) {
		r := e.do(t, httptest.NewRequest("GET", "/healthz", nil))
		if r.Status != 200 || r.Body["service"] != "logs" {
			t.Fatalf("healthz: %d %s", r.Status, r.Raw)
		}
	})
}

func TestLogsDeletedAppIsNotFound(t *testing.T) {
	e := newEnv(t)
	app := e.newApp(t, "acc", "web")
	e.db.Seed(t, entriesAt(app.ID, testNow.Add(-time.Minute), 2))
	if r := e.get(t, "acc", "web", nil); r.Status != 200 {
		t.Fatalf("before delete: %d %s", r.Status, r.Raw)
	}
	e.db.MarkAppDeleted(t, logs.App{ID: app.ID, AccountID: "acc", Slug: "web"}, testNow)
	if r := e.get(t, "acc", "web", nil); r.Status != 404 || r.Body["error"] != "not found" {
		t.Fatalf("after delete: %d %s", r.Status, r.Raw)
	}
}

// The account's own retention bounds what a read returns, and an account without a plan on
// record reads with the plan billing answers for it (the free plan's day).
func TestLogsRetentionBoundsTheRead(t *testing.T) {
	e := newEnv(t)
	app := e.newApp(t, "acc-new", "web")
	edge := testNow.Add(-24 * time.Hour)
	e.db.Seed(t, []logs.Entry{
		{AppID: app.ID, Stream: logs.StreamStdout, Timestamp: edge.Add(-time.Second), Message: "too old"},
		{AppID: app.ID, Stream: logs.StreamStdout, Timestamp: edge, Message: "on the edge"},
		{AppID: app.ID, Stream: logs.StreamStdout, Timestamp: edge.Add(10 * time.Minute), Message: "kept"},
	})
	// end 30 minutes after the edge: the defaulted start (an hour before end) is clamped.
	r := e.get(t, "acc-new", "web", url.Values{"end": {rfc(edge.Add(30 * time.Minute))}})
	if r.Status != 200 || r.Body["retentionDays"] != float64(1) || r.Body["start"] != edge.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("clamped read: %d %s", r.Status, r.Raw)
	}
	var msgs []string
	for _, x := range r.Body["entries"].([]any) {
		msgs = append(msgs, x.(map[string]any)["message"].(string))
	}
	sort.Strings(msgs)
	if len(msgs) != 2 || msgs[0] != "kept" || msgs[1] != "on the edge" {
		t.Fatalf("entries %v", msgs)
	}
}

// Without a plan on record and without billing's answer, nothing guesses the retention: the
// read answers 503 service_unavailable, whatever the window.
func TestLogsPlanUnavailableIsServiceUnavailable(t *testing.T) {
	e := newEnv(t)
	e.newApp(t, billingDown, "web")
	r := e.get(t, billingDown, "web", nil)
	if r.Status != 503 || r.Body["error"] != "service_unavailable" || r.Body["code"] != "service_unavailable" {
		t.Fatalf("want 503 service_unavailable, got %d %s", r.Status, r.Raw)
	}
	// Its app is still resolved first: another account's slug stays 404.
	if r := e.get(t, billingDown, "ghost", nil); r.Status != 404 {
		t.Fatalf("unknown app with billing down: %d %s", r.Status, r.Raw)
	}
}

// A read repeated by the same caller is answered in one round trip from what the slug
// resolved to before, checked in that same trip: a plan change, a replaced app and a delete
// each show on the very next read.
func TestRepeatedReadsSeeEveryChange(t *testing.T) {
	e := newEnv(t)
	first := e.newApp(t, "acc-r", "web")
	e.db.SavePlan(t, "acc-r", 7)
	e.db.Seed(t, entriesAt(first.ID, testNow.Add(-time.Minute), 2))
	for i := range 3 {
		if r := e.get(t, "acc-r", "web", nil); r.Status != 200 || len(r.Body["entries"].([]any)) != 2 || r.Body["retentionDays"] != float64(7) {
			t.Fatalf("read %d: %d %s", i, r.Status, r.Raw)
		}
	}
	twoDaysAgo := url.Values{"start": {rfc(testNow.Add(-48 * time.Hour))}, "end": {rfc(testNow.Add(-47 * time.Hour))}}
	if r := e.get(t, "acc-r", "web", twoDaysAgo); r.Status != 200 {
		t.Fatalf("two days back on a 7-day plan: %d %s", r.Status, r.Raw)
	}

	e.db.SavePlanVersion(t, logs.Plan{AccountID: "acc-r", Name: "free", RetentionDays: 1, Version: 2})
	if r := e.get(t, "acc-r", "web", twoDaysAgo); r.Status != 410 {
		t.Fatalf("two days back after the plan shrank to one day: %d %s", r.Status, r.Raw)
	}
	if r := e.get(t, "acc-r", "web", nil); r.Status != 200 || r.Body["retentionDays"] != float64(1) {
		t.Fatalf("after the plan change: %d %s", r.Status, r.Raw)
	}

	e.db.MarkAppDeleted(t, first, testNow)
	second := e.newApp(t, "acc-r", "web")
	e.db.Seed(t, entriesAt(second.ID, testNow.Add(-time.Minute), 1))
	if r := e.get(t, "acc-r", "web", nil); r.Status != 200 || len(r.Body["entries"].([]any)) != 1 {
		t.Fatalf("the slug's new app: %d %s", r.Status, r.Raw)
	}
	if r := e.get(t, "acc-r", "web", nil); r.Status != 200 || len(r.Body["entries"].([]any)) != 1 {
		t.Fatalf("the slug's new app again: %d %s", r.Status, r.Raw)
	}

	e.db.MarkAppDeleted(t, second, testNow)
	if r := e.get(t, "acc-r", "web", nil); r.Status != 404 {
		t.Fatalf("after the delete: %d %s", r.Status, r.Raw)
	}
	if r := e.get(t, "acc-r", "web", url.Values{"limit": {"0"}}); r.Status != 404 {
		t.Fatalf("a bad parameter on the deleted app: %d %s", r.Status, r.Raw)
	}
	if r := e.get(t, "other", "web", nil); r.Status != 404 {
		t.Fatalf("another account: %d %s", r.Status, r.Raw)
	}
}
