package store_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"tori.dev/pkg/testinfra"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/store"
	"tori.dev/services/apps/internal/usecase"
)

// The house of issue 41: 10,000 live apps over 2,000 teams (one team with 50), a tenth as many
// tombstones, half of them reclaimed; a twentieth of the apps with a hostname, every app with
// three variables.
const (
	scaleApps      = 10_000
	scaleTeams     = 2_000
	scaleHeavyApps = 50
)

// plan is Postgres's plan of one statement with its arguments.
func plan(t *testing.T, pool *pgxpool.Pool, s testinfra.Query) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN "+s.SQL, s.Args...)
	if err != nil {
		t.Fatalf("explain %s: %v", s.SQL, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain %s: %v", s.SQL, err)
	}
	return strings.Join(lines, "\n")
}

// seedHouse writes the apps of the house in one statement each.
func seedHouse(t *testing.T, pool *pgxpool.Pool, heavyTeam string) {
	t.Helper()
	ctx := context.Background()
	// Team i of the house is 00000000-0000-0000-0000-<i>; the heavy team has its own id.
	_, err := pool.Exec(ctx, `
INSERT INTO accounts (account_id, default_region, plan, apps_limit, domains_limit, plan_version)
SELECT '00000000-0000-0000-0000-' || lpad(i::text, 12, '0'), 'eu', 'pro', 1000, 100, 1 FROM generate_series(1, $1) i`, scaleTeams)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, name, region, zone, status, framework, kind, created_at, updated_at,
                  deleted_at, reclaimed_at)
SELECT gen_random_uuid(), '00000000-0000-0000-0000-' || lpad((i % $2 + 1)::text, 12, '0'),
       'app-' || i, 'app-' || i, 'eu', 'eu-1', 'running', 'static',
       CASE WHEN i % 10 = 0 THEN 'service' ELSE 'static' END,
       now() - i * interval '1 minute', now(),
       CASE WHEN i > $1 THEN now() END, CASE WHEN i > $1 AND i % 2 = 0 THEN now() END
FROM generate_series(1, $1 + $1 / 10) i`, scaleApps-scaleHeavyApps, scaleTeams)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, name, region, zone, status, framework, kind, created_at, updated_at)
SELECT gen_random_uuid(), $1, 'heavy-' || i, 'heavy-' || i, 'eu', 'eu-1', 'running', 'static', 'static',
       now() - i * interval '1 minute', now()
FROM generate_series(1, $2) i`, heavyTeam, scaleHeavyApps)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO domains (id, app_id, hostname, status, token, created_at, pending_since)
SELECT gen_random_uuid(), id, slug || '.example.com', 'pending', 'tok', now(), now()
FROM apps WHERE deleted_at IS NULL AND slug LIKE 'app-%' AND (substr(slug, 5))::int % 20 = 0`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO env_vars (app_id, key, ciphertext, key_id, created_at, updated_at)
SELECT id, 'VAR_' || k, '\x00', 'key-1', now(), now() FROM apps, generate_series(1, 3) k WHERE deleted_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
}

// Every statement of the routes the scale bench measures (GET /api/apps, GET /api/apps/{slug},
// POST /api/apps, the env snapshot a deploy asks for) reads the apps table through an index,
// never a scan of the house: each costs O(log n) however many apps there are.
func TestHotStatementsUseIndexesAtScale(t *testing.T) {
	ctx := context.Background()
	adminURL := apptest.Database(t)
	url, err := pgstore.ServiceURL(adminURL, store.Service(""))
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
	plain := apptest.Pool(t, adminURL)

	heavy := uuid.NewString()
	seedHouse(t, plain, heavy)
	st := store.New(traced)
	rec.Take()

	var heavyApps []apps.App
	var created apps.App
	steps := []struct {
		name string
		run  func() error
	}{
		{"list", func() (err error) { heavyApps, err = st.Apps(ctx, []string{heavy}); return err }},
		{"team of slug", func() error { _, err := st.AppTeam(ctx, "heavy-7"); return err }},
		{"app by slug", func() error { _, err := st.AppBySlug(ctx, heavy, "heavy-7"); return err }},
		{"account", func() error { _, err := st.Account(ctx, heavy); return err }},
		{"create", func() error {
			return st.InTx(ctx, func(tx usecase.Tx) error {
				if _, err := tx.LockAccount(ctx, heavy); err != nil {
					return err
				}
				if _, err := tx.CountLiveApps(ctx, heavy); err != nil {
					return err
				}
				now := time.Now().UTC()
				created = apps.App{ID: uuid.NewString(), AccountID: heavy, Slug: "fresh-app", Name: "fresh-app", Region: "eu",
					Zone: "eu-1", Status: apps.StatusDeploying, Framework: apps.FrameworkStatic, Kind: apps.KindStatic, CreatedAt: now, UpdatedAt: now}
				return tx.InsertApp(ctx, created)
			})
		}},
		{"app live", func() error { _, err := st.AppLive(ctx, created.ID); return err }},
		{"vars", func() error { _, err := st.Vars(ctx, created.ID); return err }},
		{"revision", func() error {
			return st.InTx(ctx, func(tx usecase.Tx) error {
				s, _, err := tx.LockRevisionState(ctx, created.ID)
				if err != nil {
					return err
				}
				return tx.SaveRevisionState(ctx, created.ID, s, time.Now())
			})
		}},
		{"domains", func() error { _, err := st.Domains(ctx, created.ID); return err }},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		stmts := rec.Take()
		if len(stmts) == 0 {
			t.Fatalf("%s ran no statement", step.name)
		}
		for _, s := range stmts {
			if !explainable(s.SQL) {
				continue // the transaction's own statements
			}
			p := plan(t, plain, s)
			t.Logf("%s: %s\n%s", step.name, strings.Join(strings.Fields(s.SQL), " "), p)
			for _, big := range []string{"Seq Scan on apps", "Seq Scan on domains", "Seq Scan on accounts", "Seq Scan on env_vars"} {
				if strings.Contains(p, big) {
					t.Errorf("%s scans a whole table of the house (%s):\n%s\n%s", step.name, big, s.SQL, p)
				}
			}
		}
	}
	if len(heavyApps) != scaleHeavyApps {
		t.Fatalf("listed %d apps of the heavy team, want %d", len(heavyApps), scaleHeavyApps)
	}
}

// explainable is a statement EXPLAIN takes: not BEGIN, COMMIT and the like.
func explainable(sql string) bool {
	word, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(sql)), " ")
	switch word {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
		return true
	}
	return false
}
