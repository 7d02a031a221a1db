package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

var (
	_ usecase.CronStore = (*Store)(nil)
	_ usecase.CronTx    = Tx{}
)

// InCronTx runs fn in a transaction of its own.
func (s *Store) InCronTx(ctx context.Context, fn func(usecase.CronTx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(Tx{tx: tx}) })
}

// AddCronRun records a run as accepted unless its id is on record (false). Runs ended more
// than a week ago go: no command is redelivered that late.
func (t Tx) AddCronRun(ctx context.Context, run revision.CronRun) (bool, error) {
	if _, err := t.tx.Exec(ctx, `DELETE FROM cron_runs WHERE finished_at < now() - interval '7 days'`); err != nil {
		return false, err
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO cron_runs (run_id, app_id, deploy_id, job, status) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (run_id) DO NOTHING`, run.RunID, run.AppID, run.DeployID, run.Job, revision.CronAccepted)
	return err == nil && tag.RowsAffected() == 1, err
}

// CronRunStatus is the status of the app's run, locked; "" when there is none.
func (t Tx) CronRunStatus(ctx context.Context, runID, appID string) (revision.CronStatus, error) {
	var s revision.CronStatus
	err := t.tx.QueryRow(ctx, `SELECT status FROM cron_runs WHERE run_id = $1 AND app_id = $2 FOR UPDATE`, runID, appID).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return s, err
}

// MoveCronRun moves a run to end.Status from one of from; false when it was in none.
func (t Tx) MoveCronRun(ctx context.Context, runID string, end revision.CronEnd, from ...revision.CronStatus) (bool, error) {
	statuses := make([]string, len(from))
	for i, s := range from {
		statuses[i] = string(s)
	}
	var exit *int
	if end.Status.Ended() {
		exit = &end.ExitCode
	}
	tag, err := t.tx.Exec(ctx, `UPDATE cron_runs SET status = $2, exit_code = $3,
		finished_at = CASE WHEN $4 THEN now() END WHERE run_id = $1 AND status = ANY($5)`,
		runID, end.Status, exit, end.Status.Ended(), statuses)
	return err == nil && tag.RowsAffected() == 1, err
}

// EndUnfinishedCronRuns marks failed every run accepted or running and returns them.
func (t Tx) EndUnfinishedCronRuns(ctx context.Context) ([]revision.CronRun, error) {
	rows, err := t.tx.Query(ctx, `UPDATE cron_runs SET status = $1, exit_code = -1, finished_at = now()
		WHERE finished_at IS NULL RETURNING run_id, app_id, deploy_id, job`, revision.CronFailed)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (revision.CronRun, error) {
		var run revision.CronRun
		err := r.Scan(&run.RunID, &run.AppID, &run.DeployID, &run.Job)
		return run, err
	})
}

// FindRevision loads a revision without locking it; false when there is none.
func (t Tx) FindRevision(ctx context.Context, deployID string) (revision.Revision, bool, error) {
	r, err := scanRevision(t.tx.QueryRow(ctx, `SELECT `+revisionColumns+` FROM revisions WHERE deploy_id = $1`, deployID))
	if errors.Is(err, revision.ErrNotFound) {
		return revision.Revision{}, false, nil
	}
	return r, err == nil, err
}
