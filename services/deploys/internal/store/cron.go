package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/deploys/internal/cron"
	"tori.dev/services/deploys/internal/usecase"
)

var _ usecase.CronStore = (*Store)(nil)

// CronInTx runs fn in a transaction.
func (s *Store) CronInTx(ctx context.Context, fn func(usecase.CronTx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(&txStore{tx: tx}) })
}

// BindCron is the cron store inside a bus consumer's transaction.
func BindCron(tx bus.Tx) usecase.CronTx { return &txStore{tx: tx.Pgx()} }

const jobColumns = `id::text, app_id, name, schedule, timezone, command, concurrency_policy, timeout_seconds, enabled,
	next_run_at, created_at, updated_at`

// joinedJobColumns are jobColumns of cron_jobs j in a join.
const joinedJobColumns = `j.id::text, j.app_id, j.name, j.schedule, j.timezone, j.command, j.concurrency_policy,
	j.timeout_seconds, j.enabled, j.next_run_at, j.created_at, j.updated_at`

func scanJob(row pgx.Row) (cron.Job, error) {
	var j cron.Job
	var policy string
	err := row.Scan(&j.ID, &j.AppID, &j.Name, &j.Schedule, &j.Timezone, &j.Command, &policy, &j.TimeoutSeconds, &j.Enabled,
		&j.NextRunAt, &j.CreatedAt, &j.UpdatedAt)
	j.Policy = cron.Policy(policy)
	j.NextRunAt = utc(j.NextRunAt)
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return j, err
}

func oneJob(row pgx.Row) (cron.Job, error) {
	j, err := scanJob(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return cron.Job{}, cron.ErrJobNotFound
	}
	if err != nil {
		return cron.Job{}, fmt.Errorf("store: load cron job: %w", err)
	}
	return j, nil
}

func jobs(ctx context.Context, q rowQuerier, sql string, args ...any) ([]cron.Job, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cron.Job, error) { return scanJob(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	return out, nil
}

const runColumns = `id::text, job_id::text, app_id, trigger, scheduled_for, status, coalesce(skip_reason, ''), exit_code,
	started_at, finished_at, coalesce(deploy_id::text, ''), coalesce(message, ''), created_at`

func scanRun(row pgx.Row) (cron.Run, error) {
	var r cron.Run
	var trigger, status, skip string
	err := row.Scan(&r.ID, &r.JobID, &r.AppID, &trigger, &r.ScheduledFor, &status, &skip, &r.ExitCode,
		&r.StartedAt, &r.FinishedAt, &r.DeployID, &r.Message, &r.CreatedAt)
	r.Trigger, r.Status, r.SkipReason = cron.Trigger(trigger), cron.Status(status), cron.SkipReason(skip)
	r.ScheduledFor, r.CreatedAt = r.ScheduledFor.UTC(), r.CreatedAt.UTC()
	r.StartedAt, r.FinishedAt = utc(r.StartedAt), utc(r.FinishedAt)
	return r, err
}

func runs(ctx context.Context, q rowQuerier, sql string, args ...any) ([]cron.Run, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cron.Run, error) { return scanRun(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	return out, nil
}

func (s *Store) CronJobs(ctx context.Context, appID string) ([]cron.Job, error) {
	return jobs(ctx, s.pool, `SELECT `+jobColumns+` FROM cron_jobs WHERE app_id = $1 ORDER BY name`, appID)
}

func (s *Store) CronJob(ctx context.Context, appID, name string) (cron.Job, error) {
	return oneJob(s.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM cron_jobs WHERE app_id = $1 AND name = $2`, appID, name))
}

func (s *Store) CronRuns(ctx context.Context, jobID string, limit int) ([]cron.Run, error) {
	return runs(ctx, s.pool, `SELECT `+runColumns+` FROM cron_runs WHERE job_id = $1
		ORDER BY scheduled_for DESC, id DESC LIMIT $2`, jobID, limit)
}

func (s *Store) LastCronRun(ctx context.Context, jobID string) (*cron.Run, error) {
	rs, err := s.CronRuns(ctx, jobID, 1)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}

func (s *Store) UnreportedCronRuns(ctx context.Context, now, pendingBefore time.Time, grace time.Duration, limit int) ([]string, error) {
	return textColumn(ctx, s.pool, `SELECT r.id::text FROM cron_runs r JOIN cron_jobs j ON j.id = r.job_id
		WHERE (r.status = 'pending' AND r.created_at < $2)
		   OR (r.status = 'running' AND r.started_at + make_interval(secs => j.timeout_seconds) + make_interval(secs => $3) < $1)
		ORDER BY r.created_at LIMIT $4`, now, pendingBefore, grace.Seconds(), limit)
}

func (s *Store) AppsWithCronsDeleted(ctx context.Context, limit int) ([]string, error) {
	return textColumn(ctx, s.pool, `SELECT DISTINCT a.id FROM apps a JOIN cron_jobs j ON j.app_id = a.id
		WHERE a.deleted_at IS NOT NULL LIMIT $1`, limit)
}

func (t *txStore) LockApp(ctx context.Context, appID string) error {
	_, err := t.tx.Exec(ctx, `SELECT 1 FROM apps WHERE id = $1 FOR UPDATE`, appID)
	return err
}

func (t *txStore) CountCronJobs(ctx context.Context, appID string) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM cron_jobs WHERE app_id = $1`, appID).Scan(&n)
	return n, err
}

func (t *txStore) LockCronJob(ctx context.Context, appID, name string) (cron.Job, error) {
	return oneJob(t.tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM cron_jobs WHERE app_id = $1 AND name = $2 FOR UPDATE`, appID, name))
}

func (t *txStore) InsertCronJob(ctx context.Context, j cron.Job) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO cron_jobs (id, app_id, name, schedule, timezone, command, concurrency_policy,
		timeout_seconds, enabled, next_run_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		j.ID, j.AppID, j.Name, j.Schedule, j.Timezone, j.Command, string(j.Policy), j.TimeoutSeconds, j.Enabled, j.NextRunAt, j.CreatedAt, j.UpdatedAt)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return cron.ErrJobExists
	}
	if err != nil {
		return fmt.Errorf("store: insert cron job: %w", err)
	}
	return nil
}

func (t *txStore) UpdateCronJob(ctx context.Context, j cron.Job) error {
	_, err := t.tx.Exec(ctx, `UPDATE cron_jobs SET schedule = $2, timezone = $3, command = $4, concurrency_policy = $5,
		timeout_seconds = $6, enabled = $7, next_run_at = $8, updated_at = $9 WHERE id = $1`,
		j.ID, j.Schedule, j.Timezone, j.Command, string(j.Policy), j.TimeoutSeconds, j.Enabled, j.NextRunAt, j.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: update cron job: %w", err)
	}
	return nil
}

func (t *txStore) DeleteCronJob(ctx context.Context, jobID string) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM cron_jobs WHERE id = $1`, jobID); err != nil {
		return fmt.Errorf("store: delete cron job: %w", err)
	}
	return nil
}

func (t *txStore) DueCronJobs(ctx context.Context, now time.Time, limit int) ([]cron.Job, error) {
	return jobs(ctx, t.tx, `SELECT `+joinedJobColumns+` FROM cron_jobs j JOIN apps a ON a.id = j.app_id AND a.deleted_at IS NULL
		WHERE j.next_run_at <= $1 ORDER BY j.next_run_at LIMIT $2 FOR UPDATE OF j SKIP LOCKED`, now, limit)
}

func (t *txStore) InProgressCronRuns(ctx context.Context, appID, jobID string) ([]cron.Run, error) {
	return runs(ctx, t.tx, `SELECT `+runColumns+` FROM cron_runs WHERE app_id = $1 AND ($2 = '' OR job_id::text = $2)
		AND status IN ('pending', 'running') ORDER BY created_at FOR UPDATE`, appID, jobID)
}

func (t *txStore) InsertCronRun(ctx context.Context, r cron.Run) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO cron_runs (id, job_id, app_id, trigger, scheduled_for, status, skip_reason, exit_code,
		started_at, finished_at, deploy_id, message, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (job_id, scheduled_for) WHERE trigger = 'scheduled' DO NOTHING`,
		r.ID, r.JobID, r.AppID, string(r.Trigger), r.ScheduledFor, string(r.Status), nullable(string(r.SkipReason)), r.ExitCode,
		r.StartedAt, r.FinishedAt, nullable(r.DeployID), nullable(r.Message), r.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("store: insert cron run: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (t *txStore) UpdateCronRun(ctx context.Context, r cron.Run) error {
	_, err := t.tx.Exec(ctx, `UPDATE cron_runs SET status = $2, exit_code = $3, started_at = $4, finished_at = $5, message = $6
		WHERE id = $1`, r.ID, string(r.Status), r.ExitCode, r.StartedAt, r.FinishedAt, nullable(r.Message))
	if err != nil {
		return fmt.Errorf("store: update cron run: %w", err)
	}
	return nil
}

func (t *txStore) CronRun(ctx context.Context, id string) (cron.Run, error) {
	r, err := scanRun(t.tx.QueryRow(ctx, `SELECT `+runColumns+` FROM cron_runs WHERE id::text = $1 FOR UPDATE`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return cron.Run{}, cron.ErrJobNotFound
	}
	if err != nil {
		return cron.Run{}, fmt.Errorf("store: load cron run: %w", err)
	}
	return r, nil
}

func (t *txStore) PruneCronRuns(ctx context.Context, jobID string, keep int) error {
	_, err := t.tx.Exec(ctx, `DELETE FROM cron_runs WHERE job_id = $1 AND status NOT IN ('pending', 'running')
		AND id NOT IN (SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY scheduled_for DESC, id DESC LIMIT $2)`, jobID, keep)
	if err != nil {
		return fmt.Errorf("store: prune cron runs: %w", err)
	}
	return nil
}

func (t *txStore) LiveDeployID(ctx context.Context, appID string) (string, error) {
	var id string
	err := t.tx.QueryRow(ctx, `SELECT id::text FROM deploys WHERE app_id = $1 AND status = 'live'`, appID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (t *txStore) DeleteCronJobsOfApp(ctx context.Context, appID string) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM cron_jobs WHERE app_id = $1`, appID); err != nil {
		return fmt.Errorf("store: delete the app's cron jobs: %w", err)
	}
	return nil
}
