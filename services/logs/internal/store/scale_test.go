package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"tori.dev/pkg/testinfra"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/store"
)

// The house of issue 41, in the logs service: 10,000 apps over 2,000 teams, 30 day
// partitions of lines (a few per app and day, and the measured app's 600 in the last hour).
const (
	scaleApps  = 10_000
	scaleTeams = 2_000
	scaleDays  = 30
)

// partitionRead matches a plan's read of a partition: an index scan or a bitmap heap scan.
var partitionRead = regexp.MustCompile(`Scan (?:Backward )?(?:using \S+ )?on (log_entries_p\d+)`)

// partitionsRead are the partitions a plan reads.
func partitionsRead(plan string) map[string]bool {
	out := map[string]bool{}
	for _, m := range partitionRead.FindAllStringSubmatch(plan, -1) {
		out[m[1]] = true
	}
	return out
}

// GET /api/apps/{slug}/logs at scale: the target is one index probe, and a page of 500 lines
// reads the window's partitions alone (a window is at most a day: two partitions of the 30),
// through the (app_id, ts, id) index in order, stopping at the limit: no partition of another
// day, no sort, no scan of a whole partition. It holds with the plan chosen for the values and
// with the generic plan a prepared statement may switch to, which prunes as it starts.
func TestPageReadPrunesPartitionsAtScale(t *testing.T) {
	ctx := context.Background()
	db := logstest.NewDB(t)
	now := time.Now().UTC()
	var days []time.Time
	for i := range scaleDays {
		days = append(days, logs.Day(now).AddDate(0, 0, -i))
	}
	if err := db.Store.EnsurePartitions(ctx, days); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, db.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	for _, sql := range []string{
		`SET search_path = logs`,
		`INSERT INTO account_plans (account_id, plan, log_retention_days, version)
		 SELECT 'team-' || i, 'pro', 30, 1 FROM generate_series(1, 2000) i`,
		`INSERT INTO apps (app_id, account_id, slug, created_at)
		 SELECT gen_random_uuid(), 'team-' || (i % 2000 + 1), 'app-' || i, now() FROM generate_series(1, 10000) i`,
		// Three lines a day for each app, over the 30 days.
		`INSERT INTO log_entries (ts, app_id, stream, message)
		 SELECT date_trunc('day', now()) - d * interval '1 day' + (n * 7 + (hashtext(a.slug) & 4095)) * interval '1 second',
		        a.app_id, 'stdout', 'line'
		 FROM apps a, generate_series(0, 29) d, generate_series(1, 3) n`,
		`ANALYZE`,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var appID string
	if err := admin.QueryRow(ctx, `SELECT app_id::text FROM apps WHERE slug = 'app-777'`).Scan(&appID); err != nil {
		t.Fatal(err)
	}
	var mine []logs.Entry
	for i := range 5000 {
		mine = append(mine, logs.Entry{AppID: appID, Stream: logs.StreamStdout, Timestamp: now.Add(-time.Duration(5000-i) * 700 * time.Millisecond), Message: "mine"})
	}
	db.Seed(t, mine)
	if _, err := admin.Exec(ctx, `ANALYZE log_entries`); err != nil {
		t.Fatal(err)
	}

	url, err := pgstore.ServiceURL(db.AdminURL, store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	rec := &testinfra.QueryRecorder{}
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	st, err := store.New(ctx, traced)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)

	if _, err := st.Target(ctx, "team-778", "app-777"); err != nil {
		t.Fatal(err)
	}
	q, err := logs.ParseQuery(logs.RawQuery{Limit: "500"}, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.Entries(ctx, appID, q.Start, q.End, nil, q.Process, q.Limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 500 {
		t.Fatalf("a page of %d lines, want 500", len(page))
	}
	after := &logs.Cursor{Timestamp: page[499].Timestamp, ID: page[499].ID}
	if _, err := st.Entries(ctx, appID, q.Start, q.End, after, q.Process, q.Limit); err != nil {
		t.Fatal(err)
	}
	// A day's span crosses midnight: two partitions, read in order.
	if _, err := st.Entries(ctx, appID, now.Add(-24*time.Hour), now, nil, q.Process, q.Limit); err != nil {
		t.Fatal(err)
	}
	stmts := rec.Take()
	if len(stmts) != 4 {
		t.Fatalf("%d statements, want the target and three pages", len(stmts))
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := admin.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		for i, s := range stmts {
			p := explainPrepared(t, admin, s)
			t.Logf("%s: %s\n%s", mode, strings.Join(strings.Fields(s.SQL), " "), p)
			if strings.Contains(p, "Seq Scan") {
				t.Errorf("%s: a scan of a whole table:\n%s\n%s", mode, s.SQL, p)
			}
			if i == 0 {
				if !strings.Contains(p, "Index Scan using apps_") {
					t.Errorf("the target is not found through an index:\n%s", p)
				}
				continue
			}
			// A generic plan lists every partition and prunes as it starts; EXPLAIN shows what
			// is left. Every partition left is read through the app's index.
			parts := partitionsRead(p)
			if len(parts) == 0 || len(parts) > 2 || !strings.Contains(p, "Limit") ||
				strings.Count(p, "_app_id_ts_id_idx") < len(parts) {
				t.Errorf("%s: the page reads %d partitions (want 1 or 2, through the app's index, under the limit):\n%s", mode, len(parts), p)
			}
			if mode == "force_generic_plan" && !strings.Contains(p, "Subplans Removed:") {
				t.Errorf("the generic plan does not prune at start-up:\n%s", p)
			}
		}
	}
}

// prepared counts the statements explainPrepared prepared, to name each.
var prepared int

// explainPrepared is the plan of s run as a prepared statement, as pgx runs it: with
// plan_cache_mode forcing it, the generic plan a statement may switch to after its fifth run.
func explainPrepared(t *testing.T, conn *pgx.Conn, s testinfra.Query) string {
	t.Helper()
	ctx := context.Background()
	prepared++
	name := fmt.Sprintf("scale_q%d", prepared)
	if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+s.SQL); err != nil {
		t.Fatalf("prepare %s: %v", s.SQL, err)
	}
	// EXECUTE takes no parameters of the protocol: the values go in as literals.
	values := make([]string, len(s.Args))
	for i, a := range s.Args {
		values[i] = literal(t, a)
	}
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE `+name+`(`+strings.Join(values, ", ")+`)`)
	if err != nil {
		t.Fatalf("explain %s: %v", s.SQL, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain %s: %v", s.SQL, err)
	}
	return strings.Join(lines, "\n")
}

// literal writes one of the page statements' arguments as SQL.
func literal(t *testing.T, v any) string {
	t.Helper()
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case time.Time:
		return "'" + v.Format(time.RFC3339Nano) + "'"
	case int, int64:
		return fmt.Sprint(v)
	}
	t.Fatalf("no literal for %T", v)
	return ""
}
