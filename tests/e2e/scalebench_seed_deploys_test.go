package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// seedDeploys writes cfg.deploysPerApp deploys for each seeded app from index from on, into
// the deploys service's own tables as its state machine leaves them (services/deploys
// internal/usecase/progress.go): the newest live, every earlier one superseded when the next
// went live. A live deploy carries its plan version (revision_plans); a service's also its
// web process and formation, as migration 009 backfills them. The apps service's copy follows
// as deploys.deploy.live would have left it: the live deploy current, the app running (a
// service napping: it sleeps until asked). Returns how many deploys it wrote.
func seedDeploys(ctx context.Context, w *scaleWorld, st *cpState, from int) (int, error) {
	apps := seededApps(w, from)
	if len(apps) == 0 {
		return 0, nil
	}
	per := w.cfg.deploysPerApp
	base := time.Now().UTC().Add(-time.Duration(per) * time.Second)
	rows := make([][]any, 0, len(apps)*per)
	var (
		appIDs, liveIDs, kinds []string
		liveAt                 []time.Time
	)
	for _, i := range apps {
		a := &w.apps[i]
		a.DeployIDs = make([]string, per)
		for k := range per {
			a.DeployIDs[k] = uuid.NewString()
		}
		kind, artifact := "static", any(st.template)
		if a.Kind == "service" {
			kind, artifact = "source", nil
		}
		for k, id := range a.DeployIDs {
			// Deploy k went live a second after it was made and stepped down when k+1 did.
			created := base.Add(time.Duration(k) * time.Second)
			live := created.Add(500 * time.Millisecond)
			status, updated := "superseded", live.Add(time.Second)
			if k == per-1 {
				status, updated = "live", live
				appIDs, liveIDs, kinds, liveAt = append(appIDs, a.ID), append(liveIDs, id), append(kinds, a.Kind), append(liveAt, live)
			}
			rows = append(rows, []any{id, a.ID, w.accounts[a.Account].ID, kind, status, artifact,
				created, updated, live, live, live.Add(-100 * time.Millisecond), "static"})
		}
	}
	tx, err := st.db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"deploys", "deploys"},
		[]string{"id", "app_id", "account_id", "kind", "status", "artifact_key", "created_at", "updated_at", "finished_at", "live_at", "activating_at", "framework"},
		pgx.CopyFromRows(rows)); err != nil {
		return 0, fmt.Errorf("copy deploys: %w", err)
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO deploys.revision_plans (deploy_id, plan_version)
		SELECT d.id, p.version FROM deploys.deploys d JOIN deploys.plans p ON p.account_id = d.account_id
		WHERE d.id = ANY($1::uuid[])`, liveIDs)
	if err != nil {
		return 0, fmt.Errorf("revision plans: %w", err)
	}
	if int(tag.RowsAffected()) != len(liveIDs) {
		return 0, fmt.Errorf("revision plans: %d of %d live deploys have their account's plan in deploys", tag.RowsAffected(), len(liveIDs))
	}
	if _, err := tx.Exec(ctx, `
		WITH s AS (SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::timestamptz[]) u(app_id, deploy_id, kind, at) WHERE kind = 'service'),
		p AS (INSERT INTO deploys.deploy_processes (deploy_id, type, command) SELECT deploy_id, 'web', '' FROM s),
		f AS (INSERT INTO deploys.formations (app_id, deploy_id, generation) SELECT app_id, deploy_id, 0 FROM s)
		INSERT INTO deploys.formation_processes (app_id, type, command, quantity, running, updated_at)
		SELECT app_id, 'web', '', 1, 0, at FROM s`, appIDs, liveIDs, kinds, liveAt); err != nil {
		return 0, fmt.Errorf("service formations: %w", err)
	}
	tag, err = tx.Exec(ctx, `
		UPDATE apps.apps a SET current_deploy_id = u.deploy_id, current_deploy_at = u.at, status_at = u.at, updated_at = u.at,
			status = CASE a.kind WHEN 'service' THEN 'napping' ELSE 'running' END, framework = 'static'
		FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) u(app_id, deploy_id, at)
		WHERE a.id = u.app_id AND a.deleted_at IS NULL`, appIDs, liveIDs, liveAt)
	if err != nil {
		return 0, fmt.Errorf("apps' current deploys: %w", err)
	}
	if int(tag.RowsAffected()) != len(appIDs) {
		return 0, fmt.Errorf("apps' current deploys: %d of %d apps", tag.RowsAffected(), len(appIDs))
	}
	return len(rows), tx.Commit(ctx)
}

// checkSeededHistory asks the API what it makes of a seeded app: the apps service must name
// its live deploy current (running, or napping for a service), and the deploys service must
// list its whole history, newest first, the newest live and the others superseded.
func checkSeededHistory(ctx context.Context, w *scaleWorld, st *cpState, i int) error {
	a := w.apps[i]
	token := w.accounts[a.Account].Token
	raw, err := st.api.call(ctx, http.MethodGet, "/api/apps/"+a.Slug, token, nil, "", http.StatusOK)
	if err != nil {
		return err
	}
	var app struct {
		Status          string
		CurrentDeployID string
	}
	if err := json.Unmarshal(raw, &app); err != nil {
		return err
	}
	want := map[string]string{"static": "running", "service": "napping"}[a.Kind]
	if app.CurrentDeployID != a.liveDeploy() || app.Status != want {
		return fmt.Errorf("app %s: status %s, current deploy %s; want %s, %s", a.Slug, app.Status, app.CurrentDeployID, want, a.liveDeploy())
	}
	raw, err = st.api.call(ctx, http.MethodGet, fmt.Sprintf("/api/apps/%s/deploys?limit=%d", a.Slug, len(a.DeployIDs)+1), token, nil, "", http.StatusOK)
	if err != nil {
		return err
	}
	var list []struct{ ID, Status string }
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("deploys of %s: %w", a.Slug, err)
	}
	if len(list) != len(a.DeployIDs) {
		return fmt.Errorf("deploys of %s: %d listed, want %d", a.Slug, len(list), len(a.DeployIDs))
	}
	for k, d := range list {
		wantID, wantStatus := a.DeployIDs[len(a.DeployIDs)-1-k], "superseded"
		if k == 0 {
			wantStatus = "live"
		}
		if d.ID != wantID || d.Status != wantStatus {
			return fmt.Errorf("deploys of %s: #%d is %s %s, want %s %s", a.Slug, k, d.ID, d.Status, wantID, wantStatus)
		}
	}
	return nil
}
