package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// escalationSQL is what an attacker writes into its own database through its DATABASE_URL: a
// plpgsql function that, wherever it runs, tries to become whoever opened the session (RESET
// ROLE), to give its login every other database's role and pg_execute_server_program, and
// records what it could do; a table CHECK and a domain CHECK call it, so copying the rows in
// (a restore) runs it. ATTACKER stands for the attacker's login. Names are qualified: a
// restore runs with an empty search_path.
const escalationSQL = `
CREATE TABLE attempts (path text, what text, outcome text);
CREATE FUNCTION escalate(path text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE r record;
BEGIN
  BEGIN
    RESET ROLE;
    INSERT INTO public.attempts VALUES (path, 'reset role', 'now ' || current_user);
  EXCEPTION WHEN others THEN INSERT INTO public.attempts VALUES (path, 'reset role', 'refused: ' || SQLERRM);
  END;
  FOR r IN SELECT rolname FROM pg_roles WHERE rolname ~ '^db_[0-9a-f]{32}$' AND rolname <> 'ATTACKER' AND rolname <> current_database()
  UNION ALL SELECT 'pg_execute_server_program' LOOP
    BEGIN
      EXECUTE format('GRANT %I TO %I, %I', r.rolname, 'ATTACKER', current_database());
      INSERT INTO public.attempts VALUES (path, 'grant ' || r.rolname, 'granted');
    EXCEPTION WHEN others THEN INSERT INTO public.attempts VALUES (path, 'grant ' || r.rolname, 'refused: ' || SQLERRM);
    END;
  END LOOP;
  RETURN true;
END $f$;
CREATE TABLE evil (v int CHECK (escalate('table check')));
CREATE DOMAIN evil_value AS int CHECK (escalate('domain check'));
CREATE TABLE evil_domain (v evil_value);
INSERT INTO evil VALUES (1);
INSERT INTO evil_domain VALUES (1);
`

// dbApp is an app of account a with a database, ready, and its DATABASE_URL as the app's
// sandbox sees it (the API masks it: the app reports it, urlAppPy).
func dbApp(t *testing.T, s *harness.Stack, a harness.Account) (slug, name, databaseURL string) {
	t.Helper()
	slug = createApp(t, s, a.Token, "service")
	if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
		t.Fatalf("create database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 60*time.Second, "DATABASE_URL of "+slug, func() bool {
		_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
		return ok && s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["status"] == "ready"
	})
	id, _ := s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["id"].(string)
	m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": urlAppPy}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	status, body := edgeGet(t, s, slug, "/")
	var out struct{ URL string }
	if status != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || out.URL == "" {
		t.Fatalf("the app: %d %s", status, body)
	}
	return slug, "db_" + strings.ReplaceAll(id, "-", ""), out.URL
}

// withDatabase is raw with its database replaced by name (what an attacker would try).
func withDatabase(t *testing.T, raw, name string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// straightToCluster is raw (a DATABASE_URL) pointed at the zone's cluster over TCP instead of
// the pooler, at database name.
func straightToCluster(t *testing.T, raw, name string) string {
	t.Helper()
	u, err := url.Parse(withDatabase(t, raw, name))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = os.Getenv("TEST_ZONE_POSTGRES_ADDR")
	if u.Host == "" {
		u.Host = "127.0.0.1:5433"
	}
	u.RawQuery = "sslmode=disable&connect_timeout=5"
	return u.String()
}

// zoneSuper is the zone cluster's superuser in database name, over its socket.
func zoneSuper(t *testing.T, name string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = name
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// The restore escalation, end to end through the API: an attacker's database holds rows
// whose table CHECK and domain CHECK call a plpgsql function that tries RESET ROLE and GRANTs
// itself every other database's role and pg_execute_server_program. After a dump and a
// restore of it through the API, its logins (the restore's too) are members of nothing, no
// attempt was granted, and its DATABASE_URL reads another account's table neither through
// the pooler nor straight at the cluster.
func TestRestoreRunsCustomerCodeAsTheCustomer(t *testing.T) {
	s := defaultStack(t)
	victim, attacker := s.NewAccount(t, "sql-victim"), s.NewAccount(t, "sql-attacker")
	_, victimDB, victimURL := dbApp(t, s, victim)
	if err := tryDatabase(victimURL, "CREATE TABLE secrets (v text); INSERT INTO secrets VALUES ('the victim''s secret')"); err != nil {
		t.Fatal(err)
	}
	slug, attackerDB, attackerURL := dbApp(t, s, attacker)
	u, _ := url.Parse(attackerURL)
	login := u.User.Username()
	if err := tryDatabase(attackerURL, strings.ReplaceAll(escalationSQL, "ATTACKER", login)); err != nil {
		t.Fatalf("the attacker's schema: %v", err)
	}

	dump := takeDump(t, s, attacker.Token, slug)
	restores := "/api/apps/" + slug + "/database/restores"
	r := post(s, t, restores, attacker.Token, map[string]string{"dumpId": dump["id"].(string)})
	if r.Status != http.StatusAccepted {
		t.Fatalf("restore: %d %s", r.Status, r.Body)
	}
	restoreDB := "db_" + strings.ReplaceAll(r.Map(t)["id"].(string), "-", "")
	var status string
	harness.Eventually(t, 90*time.Second, "the restore done", func() bool {
		var list []map[string]any
		s.Get(t, restores, attacker.Token).JSON(t, &list)
		if len(list) == 1 {
			status, _ = list[0]["status"].(string)
		}
		return status == "ready" || status == "failed"
	})
	t.Logf("restore %s", status)

	super := zoneSuper(t, "postgres")
	ctx := context.Background()
	rows, err := super.Query(ctx, `SELECT u.rolname || ' in ' || r.rolname FROM pg_auth_members m
		JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
		WHERE u.rolname IN ($1, $2, $3)`, login, attackerDB, restoreDB)
	if err != nil {
		t.Fatal(err)
	}
	memberships, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(memberships) > 0 {
		t.Fatalf("the attacker's logins gained roles: %v (%v)", memberships, err)
	}
	if status == "ready" {
		// The function did run, as the customer: every attempt refused.
		var ran, granted int
		if err := zoneSuper(t, restoreDB).QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE outcome = 'granted')
			FROM attempts WHERE what LIKE 'grant %'`).Scan(&ran, &granted); err != nil || ran == 0 || granted > 0 {
			t.Fatalf("in the restore, %d grants attempted, %d granted (%v)", ran, granted, err)
		}
	}
	if err := tryDatabase(withDatabase(t, attackerURL, victimDB), "SELECT v FROM secrets"); err == nil {
		t.Fatal("the attacker's login read the victim's table through the pooler")
	}
	if err := tryDatabase(straightToCluster(t, attackerURL, victimDB), "SELECT v FROM secrets"); err == nil {
		t.Fatal("the attacker's login read the victim's table straight from the cluster")
	}
	// The victim's data is where it was.
	if err := tryDatabase(victimURL, "SELECT v FROM secrets"); err != nil {
		t.Fatalf("the victim reads its own table: %v", err)
	}
}

// One login reaches one database, at the cluster: a customer's login granted another
// database's role by hand (as the cluster's superuser) is refused by the cluster over TCP
// for that database (no pg_hba.conf line names it there), while its own still admits it.
func TestOneLoginReachesOneDatabaseAtTheCluster(t *testing.T) {
	s := defaultStack(t)
	victim, attacker := s.NewAccount(t, "hba-victim"), s.NewAccount(t, "hba-attacker")
	_, victimDB, victimURL := dbApp(t, s, victim)
	if err := tryDatabase(victimURL, "CREATE TABLE secrets (v text); INSERT INTO secrets VALUES ('the victim''s secret')"); err != nil {
		t.Fatal(err)
	}
	_, attackerDB, attackerURL := dbApp(t, s, attacker)
	u, _ := url.Parse(attackerURL)
	login := u.User.Username()
	super := zoneSuper(t, "postgres")
	ctx := context.Background()
	if _, err := super.Exec(ctx, "GRANT "+pgx.Identifier{victimDB}.Sanitize()+" TO "+pgx.Identifier{login}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	err := tryDatabase(straightToCluster(t, attackerURL, victimDB), "SELECT v FROM secrets")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" || !strings.Contains(pgErr.Message, "pg_hba.conf") {
		t.Fatalf("a login with another database's role, straight to that database: %v", err)
	}
	if err := tryDatabase(straightToCluster(t, attackerURL, attackerDB), "SELECT 1"); err != nil {
		t.Fatalf("the login straight to its own database: %v", err)
	}
	// Through the pooler too: the pooler connects to the cluster as that login.
	if err := tryDatabase(withDatabase(t, attackerURL, victimDB), "SELECT v FROM secrets"); err == nil {
		t.Fatal("a login with another database's role read it through the pooler")
	}
}

// The zone's dumps run as the customer's own login yet are the zone's: a dump still gets a
// connection when the customer holds every one its plan gives, and the statement watchdog
// spares a dump that waits past the statement limit (on a lock the test holds), while it
// still cancels the customer's own long statement that lifted statement_timeout.
func TestWatchdogSparesTheZonesDump(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN":              "100000",
		"DATABASE_STATEMENT_TIMEOUT":        "2s",
		"DATABASE_STATEMENT_CHECK_INTERVAL": "200ms",
	}})
	a := s.NewAccount(t, "dump-watchdog")
	slug, name, databaseURL := dbApp(t, s, a)
	if err := tryDatabase(databaseURL, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('one')"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, _ := url.Parse(databaseURL)
	login := u.User.Username()

	// Every connection the plan gives held by the customer (the pooler's own server
	// connection counted): the dump still connects.
	var account map[string]any
	s.Get(t, "/api/account", a.Token).JSON(t, &account)
	limit := int(account["limits"].(map[string]any)["database"].(map[string]any)["connectionLimit"].(float64))
	watch := zoneSuper(t, "postgres")
	var sessions int
	if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE usename = $1", login).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	var held []*pgx.Conn
	for i := sessions; i < limit; i++ {
		c, err := pgx.Connect(ctx, straightToCluster(t, databaseURL, name))
		if err != nil {
			t.Fatalf("the customer's connection %d of %d: %v", i+1, limit, err)
		}
		held = append(held, c)
	}
	takeDump(t, s, a.Token, slug)
	for _, c := range held {
		c.Close(ctx)
	}

	// A dump that waits on a lock past the statement limit.
	locker := zoneSuper(t, name)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE notes IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	r := post(s, t, "/api/apps/"+slug+"/database/dumps", a.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("take a dump: %d %s", r.Status, r.Body)
	}
	dumpID := r.Map(t)["id"]
	var pid int
	var user string
	var overSocket bool
	harness.Eventually(t, 60*time.Second, "the dump waiting on the lock", func() bool {
		err := watch.QueryRow(ctx, `SELECT pid, usename, client_addr IS NULL FROM pg_stat_activity
			WHERE datname = $1 AND application_name = 'pg_dump' AND wait_event_type = 'Lock'`, name).Scan(&pid, &user, &overSocket)
		return err == nil
	})
	if user != login || !overSocket {
		t.Fatalf("the dump's session is %s (over the socket: %v), want the database's login %s over the socket", user, overSocket, login)
	}
	// The customer's own statement past the limit is cancelled by the watchdog; the dump,
	// waiting since before it, is not.
	err = tryDatabase(databaseURL, "SET statement_timeout = 0; SELECT pg_sleep(60)")
	if err == nil || !strings.Contains(err.Error(), "canceling statement due to user request") {
		t.Fatalf("the customer's statement past the limit: %v", err)
	}
	var waiting bool
	if err := watch.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'
		AND query_start < clock_timestamp() - interval '2 seconds')`, pid).Scan(&waiting); err != nil || !waiting {
		t.Fatalf("the dump past the statement limit is no longer waiting: %v (%v)", waiting, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the waiting dump succeeded", func() bool {
		var dumps []map[string]any
		s.Get(t, "/api/apps/"+slug+"/database/dumps", a.Token).JSON(t, &dumps)
		for _, d := range dumps {
			if d["id"] == dumpID {
				if d["status"] == "failed" {
					t.Fatalf("the dump the watchdog should have spared: %v", d)
				}
				return d["status"] == "succeeded"
			}
		}
		return false
	})
}
