package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// warmTimeout bounds a warm-up: it only saves readers time, and never holds up the DDL that
// asked for it for longer than this.
const warmTimeout = 2 * time.Second

// warmApp is an app id no app has, so a warm-up's reads find nothing and cost only their plan.
const warmApp = "00000000-0000-0000-0000-000000000000"

// warmReads runs the page statements once on every idle connection of the pool after
// log_entries gained or lost a partition. The DDL invalidates each session's cached plans and
// partition descriptors; the next read on the connection then plans over every day of
// retention and rebuilds those caches, 5-30 ms against under 1 ms (measured beside the
// scale bench, docs/performance.md), and readers caught that on the first read of each
// connection after every daily drop. Paid here, it is the upkeep's time, not a request's.
//
// Connections busy at the time are left alone (their next read pays, as before), and each
// warmed connection goes back to the pool as soon as it is done, so readers wait behind a
// warm-up for one read at most.
func (s *Store) warmReads(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), warmTimeout)
	defer cancel()
	now := time.Now()
	from, to := now.Add(-time.Hour), now
	var wg sync.WaitGroup
	for _, conn := range s.pool.AcquireAllIdle(ctx) {
		wg.Add(1)
		go func(conn *pgxpool.Conn) {
			defer wg.Done()
			defer conn.Release()
			for _, read := range []struct {
				sql  string
				args []any
			}{
				{PageFirstSQL, []any{warmApp, from, to, 1}},
				{pageAfter, []any{warmApp, from, to, 1, from, int64(0)}},
				{streamSQL, []any{warmApp, from, to, from, int64(0), []int64{}, 1}},
			} {
				rows, err := conn.Query(ctx, read.sql, read.args...)
				if err != nil {
					return // the connection's next read plans for itself, as it would have
				}
				rows.Close()
			}
		}(conn)
	}
	wg.Wait()
}
