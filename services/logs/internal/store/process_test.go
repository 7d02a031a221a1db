package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/store"
)

// processLines seeds one app's lines of several processes, one a second from t0, in this
// order; lines of no process (build, system) among them.
var processLines = []string{"", "web.1", "worker.1", "web.2", "worker.2", "cron.nightly.r1", "", "worker.10",
	"cron.nightly.r2", "cron.hourly.r3", "web.1", "worker.2", "workers.1"}

func seedProcesses(t *testing.T, db *logstest.DB, appID string, t0 time.Time) {
	t.Helper()
	var entries []logs.Entry
	for i, p := range processLines {
		stream := logs.StreamStdout
		if p == "" {
			stream = logs.StreamBuild
		}
		entries = append(entries, logs.Entry{AppID: appID, Stream: stream, Process: p,
			Timestamp: t0.Add(time.Duration(i) * time.Second), Message: fmt.Sprintf("line %d", i)})
	}
	db.Seed(t, entries)
}

func processesOf(entries []logs.Entry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Process)
	}
	return out
}

func TestEntriesFilteredByProcess(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	appID, other := uuid.NewString(), uuid.NewString()
	t0 := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	seedProcesses(t, db, appID, t0)
	seedProcesses(t, db, other, t0) // another app's lines never show

	cases := []struct {
		filter string
		want   []string
	}{
		{"", processLines},
		{"worker.2", []string{"worker.2", "worker.2"}},
		{"worker", []string{"worker.1", "worker.2", "worker.10", "worker.2"}}, // not workers.1
		{"web", []string{"web.1", "web.2", "web.1"}},
		{"cron", []string{"cron.nightly.r1", "cron.nightly.r2", "cron.hourly.r3"}},
		{"cron.nightly.r2", []string{"cron.nightly.r2"}},
		{"cron.nightly", []string{}}, // a dot: exact, and no process is named that
		{"clock", []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			f := mustFilter(t, tc.filter)
			got, err := db.Store.Entries(ctx, appID, t0, t0.Add(time.Hour), nil, f, 100)
			if err != nil {
				t.Fatal(err)
			}
			if g := processesOf(got); !slices.Equal(g, tc.want) {
				t.Fatalf("process=%s: %q, want %q", tc.filter, g, tc.want)
			}
			// Paging one line at a time through the filter gives the same lines.
			var paged []string
			var after *logs.Cursor
			for {
				page, err := db.Store.Entries(ctx, appID, t0, t0.Add(time.Hour), after, f, 1)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				paged = append(paged, page[0].Process)
				after = &logs.Cursor{Timestamp: page[0].Timestamp, ID: page[0].ID}
			}
			if !slices.Equal(paged, tc.want) && len(tc.want) > 0 {
				t.Fatalf("process=%s paged: %q, want %q", tc.filter, paged, tc.want)
			}
			// The live stream reads with the same rule.
			streamed, err := db.Store.StreamEntries(ctx, appID, t0, t0.Add(time.Hour), logs.Cursor{}, []int64{}, f, 100)
			if err != nil {
				t.Fatal(err)
			}
			if g := processesOf(streamed); !slices.Equal(g, tc.want) {
				t.Fatalf("stream process=%s: %q, want %q", tc.filter, g, tc.want)
			}
		})
	}
}

func mustFilter(t *testing.T, s string) logs.ProcessFilter {
	t.Helper()
	q, err := logs.ParseQuery(logs.RawQuery{Process: s}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return q.Process
}

// A filtered read goes through the process index, for a type and for one process alike, and
// stops at its limit rather than sorting every line of the window: the app's other lines
// (here a busy web) are never visited.
func TestProcessFilterUsesItsIndex(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	appID := uuid.NewString()
	t0 := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	var entries []logs.Entry
	for i := range 20000 {
		p := fmt.Sprintf("web.%d", i%3+1)
		if i%100 == 0 {
			p = fmt.Sprintf("worker.%d", i%2+1)
		}
		entries = append(entries, logs.Entry{AppID: appID, Stream: logs.StreamStdout, Process: p,
			Timestamp: t0.Add(time.Duration(i) * 100 * time.Millisecond), Message: "x"})
	}
	db.Seed(t, entries)
	if _, err := db.Pool.Exec(ctx, `ANALYZE log_entries`); err != nil {
		t.Fatal(err)
	}
	for _, filter := range []string{"worker", "worker.2"} {
		for _, after := range []*logs.Cursor{nil, {Timestamp: t0.Add(time.Minute), ID: 1}} {
			sql, args := storePage(appID, t0, t0.Add(time.Hour), after, mustFilter(t, filter), 101)
			var plan strings.Builder
			rows, err := db.Pool.Query(ctx, "EXPLAIN "+sql, args...)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan.WriteString(line + "\n")
			}
			rows.Close()
			p := plan.String()
			// Partitions name their copy of the index themselves; its expression shows which.
			if !strings.Contains(p, "Index Cond: ((app_id = ") || !strings.Contains(p, "split_part(process") ||
				strings.Contains(p, "Sort") || strings.Contains(p, "Filter:") {
				t.Errorf("process=%s after=%v: plan does not read the process index in order:\n%s", filter, after != nil, p)
			}
		}
	}
}

var storePage = store.PageQuery
