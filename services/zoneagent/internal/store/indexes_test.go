package store_test

import (
	"context"
	"strings"
	"testing"

	"tori.dev/services/zoneagent/internal/store/storetest"
)

// The statements an app's deletion runs by app id have an index to use: with sequential
// scans priced out, each plan names an index (a scan of every revision of the zone grows
// with every deploy of every app).
func TestAppDeletionStatementsHaveIndexes(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE revisions SET discard_wanted = true, updated_at = now() WHERE app_id = 'a'`,
		`UPDATE domains SET active = false WHERE app_id = 'a'`,
		`DELETE FROM live WHERE app_id = 'a'`,
	} {
		var plan strings.Builder
		rows, err := conn.Query(ctx, "EXPLAIN "+stmt)
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
		if !strings.Contains(plan.String(), "Index") {
			t.Errorf("%s has no index to use:\n%s", stmt, plan.String())
		}
	}
}
