package managed

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
)

// A role that raised its own statement_timeout still has a statement past the zone's limit
// cancelled, and a transaction left idle past its limit ended; the zone's own sessions, under
// the same login but over the cluster's Unix socket (as dumps and restores run), are left
// alone. The limits are short here; the zone's
// default statement limit is the contract's 60 s (DATABASE_STATEMENT_TIMEOUT).
func TestWatchdogEndsWhatTheRoleCouldLift(t *testing.T) {
	ctx := context.Background()
	c := Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	name := newName()
	if err := c.Create(ctx, name, "pw", 5, 1<<28); err != nil {
		t.Fatal(err)
	}
	w := Watchdog{AdminURL: c.AdminURL, StatementLimit: time.Second, IdleLimit: 2 * time.Second}

	long, err := pgx.Connect(ctx, dbURL(c.AdminURL, name, "pw", name))
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close(ctx)
	// The role lifts its own limit, for the session and for every later one.
	if _, err := long.Exec(ctx, "SET statement_timeout = '1h'; ALTER ROLE CURRENT_USER SET statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	idle, err := pgx.Connect(ctx, dbURL(c.AdminURL, name, "pw", name))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close(ctx)
	var timeout string
	if err := idle.QueryRow(ctx, "SHOW statement_timeout").Scan(&timeout); err != nil || timeout != "0" {
		t.Fatalf("the role's own setting: %q (%v)", timeout, err)
	}
	if _, err := idle.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
		t.Fatal(err)
	}
	zone, err := pgx.Connect(ctx, overSocket(t, c.AdminURL, name, "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer zone.Close(ctx)

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				if _, err := w.Run(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()

	zoneDone := make(chan error, 1)
	go func() {
		_, err := zone.Exec(ctx, "SET statement_timeout = 0; SELECT pg_sleep(4)")
		zoneDone <- err
	}()
	started := time.Now()
	_, err = long.Exec(ctx, "SELECT pg_sleep(120)")
	if !isCode(err, "57014") {
		t.Fatalf("a statement past the zone's limit: want query_canceled (57014), got %v", err)
	}
	if took := time.Since(started); took > 30*time.Second {
		t.Fatalf("cancelled after %v", took)
	}
	// Cancelled, not ended: the session goes on.
	if _, err := long.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the session after the cancel: %v", err)
	}
	// Watched from outside: a statement of its own would make it busy again.
	testinfra.Eventually(t, 30*time.Second, "the idle transaction ended", func() bool {
		check, err := pgx.Connect(ctx, c.AdminURL)
		if err != nil {
			t.Fatal(err)
		}
		defer check.Close(ctx)
		var alive bool
		if err := check.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)", idle.PgConn().PID()).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		return !alive
	})
	if _, err := idle.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("the ended session still answers")
	}
	if err := <-zoneDone; err != nil {
		t.Fatalf("the zone's own long statement: %v", err)
	}
}

// overSocket is the URL that logs in to database name as its login over the cluster's Unix
// socket, as the zone's dumps do.
func overSocket(t *testing.T, admin, name, password string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"host": {testinfra.ZonePostgresSocket(t)}, "port": {u.Port()}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.UserPassword(name, password), Path: "/" + name, RawQuery: q.Encode()}).String()
}
