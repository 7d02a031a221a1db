package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// warmTimeout bounds a warm-up: it only saves readers time, and never holds up the DDL that
// asked for it for longer than this.
const warmTimeout = 2 * time.Second

// warmApp is an app id no app has, so a warm-up's reads find nothing and cost only their plan.
const warmApp = "00000000-0000-0000-0000-000000000000"

// warmReads runs the page statements once on every idle connection of the pool after
// log_entries gained or lost a partition. The DDL invalidates what each session has cached
// of the table (its partitions' descriptors, its plans, catalog entries), and the next read on
// the connection rebuilt it: 1-4 ms more than a read on an idle machine (measured apart,
// docs/performance.md), several times that under load, paid by the first request on each
// connection after every daily drop. Paid here, it is the upkeep's time, not a request's.
//
// One connection at a time: were the warm-up to hold every idle one, a request arriving
// meanwhile would open a new connection, whose first read costs as much again. Connections
// busy throughout are left alone (their next read pays, as before).
func (s *Store) warmReads(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), warmTimeout)
	defer cancel()
	now := time.Now()
	from, to := now.Add(-time.Hour), now
	warmed := map[uint32]bool{}
	for ctx.Err() == nil {
		conn := s.unwarmedIdle(ctx, warmed)
		if conn == nil {
			return
		}
		warmed[conn.Conn().PgConn().PID()] = true
		warmConn(ctx, conn, from, to)
		conn.Release()
	}
}

// unwarmedIdle is an idle connection of the pool not in warmed, or nil when there is none;
// the other idle ones go straight back.
func (s *Store) unwarmedIdle(ctx context.Context, warmed map[uint32]bool) *pgxpool.Conn {
	var pick *pgxpool.Conn
	for _, c := range s.pool.AcquireAllIdle(ctx) {
		if pick == nil && !warmed[c.Conn().PgConn().PID()] {
			pick = c
			continue
		}
		c.Release()
	}
	return pick
}

// warmConn runs each read the routes make on log_entries once, for an app no app has.
func warmConn(ctx context.Context, conn *pgxpool.Conn, from, to time.Time) {
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
}
