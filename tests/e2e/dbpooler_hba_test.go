package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// A customer's login that gained another account's database role on the zone's cluster
// (granted here by hand, as the cluster's superuser: what the restore escalation of issue 36
// did through customer code) still reaches only its own database through the zone's
// pooler: from inside its app, its DATABASE_URL pointed at the other database is refused by
// PgBouncer itself ("login rejected", PgBouncer's wording: Postgres's would name pg_hba.conf
// or a permission), while its own database works on.
func TestPoolerRefusesAForeignRoleLogin(t *testing.T) {
	s := defaultStack(t)
	attacker := s.NewAccount(t, "db-hba-attacker")
	victim := s.NewAccount(t, "db-hba-victim")
	database := func(a harness.Account, slug string) string {
		t.Helper()
		if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("create database: %d %s", r.Status, r.Body)
		}
		var id string
		harness.Eventually(t, 30*time.Second, "DATABASE_URL of "+slug, func() bool {
			id, _ = s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t)["id"].(string)
			_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
			return ok
		})
		return "db_" + strings.ReplaceAll(id, "-", "")
	}
	slug := createApp(t, s, attacker.Token, "service")
	mine := database(attacker, slug)
	theirs := database(victim, createApp(t, s, victim.Token, "service"))

	m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	r := deploySource(t, s, attacker.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": dbAppPy}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, attacker.Token, slug, r.Map(t)["id"].(string), "live")
	probe := func(path string) map[string]any {
		t.Helper()
		status, body := edgeGet(t, s, slug, path)
		var out map[string]any
		if status != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		t.Logf("%s: %s", path, body)
		return out
	}

	ctx := context.Background()
	super, err := pgx.Connect(ctx, testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	if _, err := super.Exec(ctx, "GRANT "+pgx.Identifier{theirs}.Sanitize()+" TO "+pgx.Identifier{mine}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	// The grant is real: on the cluster the attacker's login holds CONNECT on the other
	// account's database, so only the pooler stands between them.
	var can bool
	if err := super.QueryRow(ctx, "SELECT has_database_privilege($1, $2, 'CONNECT')", mine, theirs).Scan(&can); err != nil || !can {
		t.Fatalf("the grant gave no CONNECT on the other database (%v)", err)
	}

	if o := probe("/other?db=" + theirs); o["rc"] == float64(0) || !strings.Contains(o["err"].(string), "login rejected") {
		t.Fatalf("the attacker's login to the other account's database through the pooler: want PgBouncer's \"login rejected\", got %v", o)
	}
	if w := probe("/write"); w["rc"] != float64(0) || w["out"] != "1" {
		t.Fatalf("the attacker's own database through the pooler: %v", w)
	}
}
