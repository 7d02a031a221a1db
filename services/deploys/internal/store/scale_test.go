package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/usecase"
)

// The house of issue 41: 10,000 live apps over 2,000 teams (one team with 50), ten deploys
// each (the newest live, the others superseded), a tenth as many deleted apps.
const (
	scaleApps      = 10_000
	scaleTeams     = 2_000
	scaleHeavyApps = 50
	deploysPerApp  = 10
)

// explainable is a statement EXPLAIN takes: not BEGIN, COMMIT and the like.
func explainable(sql string) bool {
	word, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(sql)), " ")
	switch word {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
		return true
	}
	return false
}

func explain(t *testing.T, pool *pgxpool.Pool, s testinfra.Query) string {
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

func seedDeploysHouse(t *testing.T, pool *pgxpool.Pool, heavyTeam string) {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO plans (account_id, plan, concurrent_deploys, upload_bytes, build_minutes, min_scale, cpu, version)
		 SELECT 'team-' || i, 'pro', 3, 100000000, 30, 0, 1, 1 FROM generate_series(1, $1::int) i`,
		`INSERT INTO billing_holds (account_id, active, version) SELECT 'team-' || i, false, 1 FROM generate_series(1, $1::int) i`,
	} {
		if _, err := pool.Exec(ctx, sql, scaleTeams); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	_, err := pool.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, kind, zone, created_at, deleted_at)
SELECT gen_random_uuid()::text, 'team-' || (i % $2 + 1), 'app-' || i,
       CASE WHEN i % 10 = 0 THEN 'service' ELSE 'static' END, 'eu-1', now() - i * interval '1 minute',
       CASE WHEN i > $1 THEN now() END
FROM generate_series(1, $1 + $1 / 10) i`, scaleApps-scaleHeavyApps, scaleTeams)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO apps (id, account_id, slug, kind, zone, created_at)
SELECT gen_random_uuid()::text, $1, 'heavy-' || i, 'static', 'eu-1', now() FROM generate_series(1, $2::int) i`, heavyTeam, scaleHeavyApps)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `
INSERT INTO deploys (id, app_id, account_id, kind, status, artifact_key, created_at, updated_at, finished_at, live_at)
SELECT gen_random_uuid(), a.id, a.account_id, 'static', CASE WHEN n = $1 THEN 'live' ELSE 'superseded' END,
       'artifacts/' || a.id || '/' || n || '.tar', a.created_at + n * interval '1 minute', now(), now(), now()
FROM apps a, generate_series(1, $1::int) n`, deploysPerApp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
}

// Every statement of POST /api/apps/{slug}/deploys (a small static deploy, from the access
// gate's look-up to the insert under the account's lock, and the zone's progress to live)
// and of the deploys list reads through an index: none scans the house's apps or its
// 100,000 deploys.
func TestDeployStatementsUseIndexesAtScale(t *testing.T) {
	ctx := context.Background()
	svc := store.Service("")
	adminURL := testinfra.ServiceDatabase(t, svc, bus.Migrations, store.Migrations)
	url, err := pgstore.ServiceURL(adminURL, svc)
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
	plain := testinfra.OpenServicePool(t, adminURL, svc)

	heavy := "team-heavy"
	seedDeploysHouse(t, plain, heavy)
	st := store.New(traced)
	rec.Take()

	var app usecase.App
	var live *deploy.Deploy
	d := &deploy.Deploy{ID: uuid.NewString(), AccountID: heavy, Kind: deploy.KindStatic, Status: deploy.Building}
	steps := []struct {
		name string
		run  func() error
	}{
		{"team of slug", func() error { _, _, err := st.AppTeam(ctx, "heavy-7"); return err }},
		{"app by slug", func() (err error) { app, err = st.AppBySlug(ctx, heavy, "heavy-7"); return err }},
		{"hold", func() error { _, _, err := st.Hold(ctx, heavy); return err }},
		{"plan", func() error { _, _, err := st.Plan(ctx, heavy); return err }},
		{"reserve upload", func() error {
			return st.InTx(ctx, func(tx usecase.Tx) error {
				if err := tx.LockAccount(ctx, heavy); err != nil {
					return err
				}
				if _, err := tx.CountOpen(ctx, heavy); err != nil {
					return err
				}
				if _, err := tx.CountUploads(ctx, heavy, time.Now()); err != nil {
					return err
				}
				return tx.InsertUpload(ctx, d.ID, heavy, time.Now().Add(time.Hour))
			})
		}},
		{"insert", func() error {
			d.AppID, d.ArtifactKey = app.ID, "artifacts/"+app.ID+"/"+d.ID+".tar"
			d.CreatedAt, d.UpdatedAt = time.Now().UTC(), time.Now().UTC()
			return st.InTx(ctx, func(tx usecase.Tx) error {
				if err := tx.DeleteUpload(ctx, d.ID); err != nil {
					return err
				}
				if _, err := tx.CountOpen(ctx, heavy); err != nil {
					return err
				}
				if err := tx.Insert(ctx, d); err != nil {
					return err
				}
				return tx.RecordRevisionPlan(ctx, d.ID, 1)
			})
		}},
		{"go live", func() error {
			return st.InTx(ctx, func(tx usecase.Tx) error {
				if _, err := tx.Deploy(ctx, d.ID); err != nil {
					return err
				}
				if _, err := tx.App(ctx, app.ID); err != nil {
					return err
				}
				var err error
				if live, err = tx.Live(ctx, app.ID); err != nil {
					return err
				}
				if _, err := tx.OpenDeploys(ctx, app.ID); err != nil {
					return err
				}
				live.Status = deploy.Superseded
				return tx.Update(ctx, live)
			})
		}},
		{"list", func() error { _, err := st.List(ctx, app.ID, 20, ""); return err }},
		{"list after", func() error { _, err := st.List(ctx, app.ID, 20, live.ID); return err }},
		{"artifact referenced", func() error { _, err := st.ArtifactReferenced(ctx, d.ArtifactKey); return err }},
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
				continue
			}
			p := explain(t, plain, s)
			t.Logf("%s: %s\n%s", step.name, strings.Join(strings.Fields(s.SQL), " "), p)
			for _, big := range []string{"Seq Scan on apps", "Seq Scan on deploys", "Seq Scan on plans", "Seq Scan on billing_holds"} {
				if strings.Contains(p, big) {
					t.Errorf("%s scans a whole table of the house (%s):\n%s\n%s", step.name, big, s.SQL, p)
				}
			}
		}
	}
	if live == nil {
		t.Fatal("the app had no live deploy")
	}
}
