package usecase

import (
	"context"
	"time"

	"tori.dev/services/deploys/internal/cron"
)

// CronStore is the persistence of cron jobs and their runs.
type CronStore interface {
	CronInTx(ctx context.Context, fn func(CronTx) error) error
	// CronJobs lists the app's jobs by name.
	CronJobs(ctx context.Context, appID string) ([]cron.Job, error)
	// CronJob finds one; cron.ErrJobNotFound when there is none.
	CronJob(ctx context.Context, appID, name string) (cron.Job, error)
	// CronRuns lists a job's runs newest first.
	CronRuns(ctx context.Context, jobID string, limit int) ([]cron.Run, error)
	// LastCronRun is the job's newest run, or nil.
	LastCronRun(ctx context.Context, jobID string) (*cron.Run, error)
	// UnreportedCronRuns are runs the zone should have reported on by now: pending since
	// before pendingBefore, or running past their timeout plus grace.
	UnreportedCronRuns(ctx context.Context, now time.Time, pendingBefore time.Time, grace time.Duration, limit int) ([]string, error)
	// AppsWithCronsDeleted are deleted apps that still have cron jobs.
	AppsWithCronsDeleted(ctx context.Context, limit int) ([]string, error)
}

// CronTx is the cron work done in one transaction; what it publishes commits with it.
type CronTx interface {
	Publisher
	App(ctx context.Context, appID string) (App, error)
	// LockApp serializes job creation per app, so the job count cannot be raced past the limit.
	LockApp(ctx context.Context, appID string) error
	CountCronJobs(ctx context.Context, appID string) (int64, error)
	// LockCronJob loads a job with a row lock; cron.ErrJobNotFound when there is none.
	LockCronJob(ctx context.Context, appID, name string) (cron.Job, error)
	// InsertCronJob returns cron.ErrJobExists when the app has a job of that name.
	InsertCronJob(ctx context.Context, j cron.Job) error
	UpdateCronJob(ctx context.Context, j cron.Job) error
	DeleteCronJob(ctx context.Context, jobID string) error
	// DueCronJobs locks up to limit jobs of live apps due at now, skipping those another
	// transaction holds: each due tick is fired by one scheduler.
	DueCronJobs(ctx context.Context, now time.Time, limit int) ([]cron.Job, error)
	// InProgressCronRuns locks the job's pending and running runs (all of the app's when
	// jobID is empty).
	InProgressCronRuns(ctx context.Context, appID, jobID string) ([]cron.Run, error)
	// InsertCronRun writes a run; false when a scheduled run for that tick exists already.
	InsertCronRun(ctx context.Context, r cron.Run) (bool, error)
	UpdateCronRun(ctx context.Context, r cron.Run) error
	// CronRun loads a run with a row lock; cron.ErrJobNotFound when there is none.
	CronRun(ctx context.Context, id string) (cron.Run, error)
	// PruneCronRuns keeps the job's newest keep runs (and every run in progress).
	PruneCronRuns(ctx context.Context, jobID string, keep int) error
	// LiveDeployID is the app's live deploy, or "".
	LiveDeployID(ctx context.Context, appID string) (string, error)
	DeleteCronJobsOfApp(ctx context.Context, appID string) error
}
