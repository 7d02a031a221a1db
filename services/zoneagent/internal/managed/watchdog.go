package managed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"tori.dev/contract/names"
)

// Watchdog enforces on the cluster what a database's own role could otherwise lift: its
// statement_timeout is the role's to change (SET, ALTER ROLE … IN DATABASE), so the zone
// itself cancels any statement of a customer login running past StatementLimit (the
// contract's 60 s) and ends any session idle in a transaction past IdleLimit (it holds one
// of the pool's server connections, and its locks, for nothing). It runs as the provisioning
// role from the maintenance database and reads pg_stat_activity alone: pg_read_all_stats
// shows it every session's state and pg_signal_backend lets it end them. It watches the
// logins of this zone's databases (those whose owner the provisioning role is a member of:
// several zones may share a cluster) and spares the zone's own dumps and restores, which log
// in as the same logins but over the cluster's Unix socket (dump.go): a session with no
// client address, which no customer can open.
type Watchdog struct {
	AdminURL                  string
	StatementLimit, IdleLimit time.Duration
}

// customerLogin matches the logins of managed databases (logins.go) and nothing else: a
// database's name (the contract's names.DatabaseNamePattern), or it with the second
// login's _b.
var customerLogin = strings.TrimSuffix(names.DatabaseNamePattern, "$") + "(_b)?$"

// Run ends what is over its limit and reports how many backends it signalled.
func (w Watchdog) Run(ctx context.Context) (int64, error) {
	conn, err := Cluster{AdminURL: w.AdminURL}.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE CASE WHEN state = 'active' THEN pg_cancel_backend(pid) ELSE pg_terminate_backend(pid) END)
		FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND usename ~ $1 AND pid <> pg_backend_pid()
		  AND client_addr IS NOT NULL
		  AND pg_has_role((SELECT datdba FROM pg_database WHERE oid = datid), 'MEMBER')
		  AND ((state = 'active' AND query_start < clock_timestamp() - make_interval(secs => $2))
		    OR (state IN ('idle in transaction', 'idle in transaction (aborted)')
		        AND state_change < clock_timestamp() - make_interval(secs => $3)))`,
		customerLogin, w.StatementLimit.Seconds(), w.IdleLimit.Seconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("managed: statement watchdog: %w", err)
	}
	return n, nil
}
