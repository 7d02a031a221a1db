package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/tests/e2e/harness"
)

// The log route through the gateway, fed the way a zone agent feeds it: batches on the bus.
func TestLogs(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "logs")
	r := post(s, t, "/api/apps", a.Token, map[string]string{"kind": "service"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create app: %d %s", r.Status, r.Body)
	}
	app := r.Map(t)
	slug, appID := app["slug"].(string), app["id"].(string)
	logsPath := "/api/apps/" + slug + "/logs"

	// 700 lines share one timestamp, so paging must not lean on timestamps alone.
	now := time.Now().UTC()
	shared := now.Add(-10 * time.Minute).Truncate(time.Millisecond)
	deploy := uuid.NewString()
	var entries []*logsv1.LogEntry
	for i := 0; i < 1200; i++ {
		ts := shared
		if i >= 700 {
			ts = shared.Add(time.Duration(i-699) * time.Second)
		}
		entries = append(entries, &logsv1.LogEntry{AppId: appID, DeployId: deploy, Stream: "stdout", Timestamp: timestamppb.New(ts), Message: fmt.Sprintf("line %04d", i)})
	}
	for i := 0; i < len(entries); i += 400 {
		s.PublishEvent(t, "zone.logs.batch", &logsv1.LogBatch{Entries: entries[i : i+400]})
	}

	query := func(q url.Values) *harness.Response {
		return s.Get(t, logsPath+"?"+q.Encode(), a.Token)
	}
	window := url.Values{"start": {now.Add(-time.Hour).Format(time.RFC3339)}, "end": {now.Add(time.Hour).Format(time.RFC3339)}, "limit": {"500"}}
	harness.Eventually(t, 15*time.Second, "1,200 lines ingested", func() bool {
		q := url.Values{"start": window["start"], "end": window["end"], "limit": {"500"}}
		total := 0
		for {
			var page struct {
				Entries []map[string]any `json:"entries"`
				Next    *string          `json:"next"`
			}
			query(q).JSON(t, &page)
			total += len(page.Entries)
			if page.Next == nil {
				return total == 1200
			}
			q.Set("cursor", *page.Next)
		}
	})

	t.Run("pages with next neither skip nor repeat", func(t *testing.T) {
		for _, limit := range []string{"1", "7", "500"} {
			q := url.Values{"start": window["start"], "end": window["end"], "limit": {limit}}
			seen := map[string]bool{}
			var stamps []time.Time
			pages := 0
			for {
				r := query(q)
				if r.Status != http.StatusOK {
					t.Fatalf("limit %s: %d %s", limit, r.Status, r.Body)
				}
				var page struct {
					RetentionDays float64          `json:"retentionDays"`
					Entries       []map[string]any `json:"entries"`
					Next          *string          `json:"next"`
				}
				r.JSON(t, &page)
				if page.RetentionDays != 1 {
					t.Fatalf("retentionDays %v on nestling", page.RetentionDays)
				}
				for _, e := range page.Entries {
					id := e["id"].(string)
					if seen[id] {
						t.Fatalf("limit %s: entry %s repeated", limit, id)
					}
					seen[id] = true
					ts, err := time.Parse(time.RFC3339Nano, e["timestamp"].(string))
					if err != nil {
						t.Fatalf("timestamp %v", e["timestamp"])
					}
					stamps = append(stamps, ts)
					expectKeys(t, "entry", e, "id", "timestamp", "stream", "deployId", "message", "process")
				}
				pages++
				if page.Next == nil {
					break
				}
				q.Set("cursor", *page.Next)
				if limit == "1" && pages > 40 {
					break // enough to cross the shared timestamp's first lines; the rest is slow
				}
			}
			if limit != "1" && len(seen) != 1200 {
				t.Fatalf("limit %s: %d distinct entries, want 1200", limit, len(seen))
			}
			// Oldest first; lines sharing a timestamp may come in either batch's order.
			for i := 1; i < len(stamps); i++ {
				if stamps[i].Before(stamps[i-1]) {
					t.Fatalf("limit %s: entry %d (%s) is older than the one before it", limit, i, stamps[i])
				}
			}
		}
	})

	t.Run("parameter rules", func(t *testing.T) {
		start := now.Add(-time.Hour).Truncate(time.Second)
		at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
		ok := []url.Values{
			{},
			{"start": {at(0)}, "end": {at(24 * time.Hour)}},
			{"limit": {"1"}},
			{"limit": {"500"}},
			{"start": {start.Format(time.RFC3339Nano)}},
		}
		for _, q := range ok {
			if r := query(q); r.Status != http.StatusOK {
				t.Fatalf("%v: %d %s", q, r.Status, r.Body)
			}
		}
		bad := []url.Values{
			{"start": {at(0)}, "end": {at(24*time.Hour + time.Second)}},
			{"start": {at(0)}, "end": {at(-time.Second)}},
			{"limit": {"0"}},
			{"limit": {"501"}},
			{"limit": {"ten"}},
			{"start": {"yesterday"}},
			{"end": {"2026-13-01T00:00:00Z"}},
		}
		for _, q := range bad {
			e := expectError(t, query(q), http.StatusBadRequest, "invalid_parameter")
			if e.Message == "" {
				t.Fatalf("%v: no message names the parameter", q)
			}
		}
		old := now.Add(-25 * time.Hour)
		r := query(url.Values{"start": {old.Format(time.RFC3339)}, "end": {old.Add(time.Hour).Format(time.RFC3339)}})
		expectError(t, r, http.StatusGone, "beyond_retention")
	})

	t.Run("another account's app and a deleted app are 404", func(t *testing.T) {
		b := s.NewAccount(t, "logs-other")
		expectError(t, s.Get(t, logsPath, b.Token), http.StatusNotFound, "not found")
		expectError(t, s.Get(t, "/api/apps/no-such-app/logs", a.Token), http.StatusNotFound, "not found")
		del := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug, Token: a.Token})
		if del.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", del.Status, del.Body)
		}
		harness.Eventually(t, time.Second, "deleted app's logs gone", func() bool {
			return s.Get(t, logsPath, a.Token).Status == http.StatusNotFound
		})
	})
}
