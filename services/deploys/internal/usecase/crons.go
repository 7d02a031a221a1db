package usecase

import (
	"context"
	"fmt"
	"time"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/deploys/internal/cron"
)

// Crons are the cron-job use cases: the API over jobs and runs, the scheduler that fires
// due ticks, the zones' reports on runs and the sweeps that close what nobody reported.
type Crons struct {
	svc   *Service
	store CronStore
	// minIntervalOverride, when positive, replaces the plan's minimum minutes between
	// firings (DEPLOYS_CRON_MIN_INTERVAL_MINUTES, test-only).
	minIntervalOverride int64
}

// Crons builds the cron use cases over store, sharing the service's clock, ids, apps,
// plans and holds.
func (s *Service) Crons(store CronStore, minIntervalOverride int64) *Crons {
	return &Crons{svc: s, store: store, minIntervalOverride: minIntervalOverride}
}

// JobView is a job with its newest run, as the API shows it.
type JobView struct {
	cron.Job
	LastRun *cron.Run
}

// JobInput is a create or a patch; nil members are absent (a patch keeps them, a create
// takes the defaults).
type JobInput struct {
	Name, Schedule, Timezone, Command, Policy *string
	TimeoutSeconds                            *int64
	Enabled                                   *bool
}

// serviceApp finds the caller's app and refuses a static one.
func (c *Crons) serviceApp(ctx context.Context, accountID, slug string) (App, error) {
	app, err := c.svc.appFor(ctx, accountID, slug)
	if err != nil {
		return App{}, err
	}
	if app.Kind != "service" {
		return App{}, cron.ErrNotAService
	}
	return app, nil
}

// limits are the account's plan's cron limits, with the test-only interval override.
func (c *Crons) limits(ctx context.Context, accountID string) (plan Plan, jobs, minInterval, timeout int64, err error) {
	plan, err = c.svc.planFor(ctx, accountID)
	if err != nil {
		return Plan{}, 0, 0, 0, err
	}
	jobs, minInterval, timeout = cronLimits(plan)
	if c.minIntervalOverride > 0 {
		minInterval = c.minIntervalOverride
	}
	return plan, jobs, minInterval, timeout, nil
}

func (c *Crons) view(ctx context.Context, j cron.Job) (JobView, error) {
	last, err := c.store.LastCronRun(ctx, j.ID)
	return JobView{Job: j, LastRun: last}, err
}

// List is the app's jobs by name.
func (c *Crons) List(ctx context.Context, accountID, slug string) ([]JobView, error) {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	js, err := c.store.CronJobs(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	out := make([]JobView, 0, len(js))
	for _, j := range js {
		v, err := c.view(ctx, j)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Get is one job.
func (c *Crons) Get(ctx context.Context, accountID, slug, name string) (JobView, error) {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return JobView{}, err
	}
	j, err := c.store.CronJob(ctx, app.ID, name)
	if err != nil {
		return JobView{}, err
	}
	return c.view(ctx, j)
}

// Create adds a job; its first tick is the schedule's next firing after now.
func (c *Crons) Create(ctx context.Context, accountID, slug string, in JobInput) (JobView, error) {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return JobView{}, err
	}
	plan, maxJobs, minInterval, maxTimeout, err := c.limits(ctx, accountID)
	if err != nil {
		return JobView{}, err
	}
	now := c.svc.clock()
	j := cron.Job{ID: c.svc.newID(), AppID: app.ID, Timezone: "UTC", Policy: cron.Forbid, TimeoutSeconds: maxTimeout, Enabled: true,
		CreatedAt: now, UpdatedAt: now}
	if in.Name == nil {
		return JobView{}, &cron.FieldError{Field: "name", Reason: "is required"}
	}
	if in.Schedule == nil {
		return JobView{}, &cron.FieldError{Field: "schedule", Reason: "is required"}
	}
	if in.Command == nil {
		return JobView{}, &cron.FieldError{Field: "command", Reason: "is required"}
	}
	j.Name = *in.Name
	auditCron(ctx, j.Name)
	apply(&j, in)
	if err := c.check(&j, now, plan, minInterval, maxTimeout); err != nil {
		return JobView{}, err
	}
	err = c.store.CronInTx(ctx, func(tx CronTx) error {
		if err := tx.LockApp(ctx, app.ID); err != nil {
			return err
		}
		n, err := tx.CountCronJobs(ctx, app.ID)
		if err != nil {
			return err
		}
		if n >= maxJobs {
			return &cron.LimitError{Err: cron.ErrJobLimit, Limit: maxJobs, Plan: plan.Name}
		}
		return tx.InsertCronJob(ctx, j)
	})
	if err != nil {
		return JobView{}, err
	}
	return JobView{Job: j}, nil
}

// Update patches a job; a new schedule or zone starts from the next firing after now.
func (c *Crons) Update(ctx context.Context, accountID, slug, name string, in JobInput) (JobView, error) {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return JobView{}, err
	}
	plan, _, minInterval, maxTimeout, err := c.limits(ctx, accountID)
	if err != nil {
		return JobView{}, err
	}
	auditCron(ctx, name)
	var out cron.Job
	err = c.store.CronInTx(ctx, func(tx CronTx) error {
		j, err := tx.LockCronJob(ctx, app.ID, name)
		if err != nil {
			return err
		}
		if in.Name != nil && *in.Name != j.Name {
			return &cron.FieldError{Field: "name", Reason: "cannot be changed (delete the job and add it again)"}
		}
		now := c.svc.clock()
		before := j
		apply(&j, in)
		if err := c.check(&j, now, plan, minInterval, maxTimeout); err != nil {
			return err
		}
		if j.Schedule == before.Schedule && j.Timezone == before.Timezone {
			j.NextRunAt = before.NextRunAt // the ticks go on as they were
		}
		j.UpdatedAt = now
		out = j
		return tx.UpdateCronJob(ctx, j)
	})
	if err != nil {
		return JobView{}, err
	}
	return c.view(ctx, out)
}

// auditCron names the job a request changes in its audit entry (which commits with the
// change); the command and schedule stay out of it.
func auditCron(ctx context.Context, name string) { accessgate.SetTarget(ctx, "cron/"+name) }

func apply(j *cron.Job, in JobInput) {
	if in.Schedule != nil {
		j.Schedule = *in.Schedule
	}
	if in.Timezone != nil {
		j.Timezone = *in.Timezone
	}
	if in.Command != nil {
		j.Command = *in.Command
	}
	if in.Policy != nil {
		j.Policy = cron.Policy(*in.Policy)
	}
	if in.TimeoutSeconds != nil {
		j.TimeoutSeconds = *in.TimeoutSeconds
	}
	if in.Enabled != nil {
		j.Enabled = *in.Enabled
	}
}

// check validates j against its own rules and the plan's, and sets its next tick from now.
func (c *Crons) check(j *cron.Job, now time.Time, plan Plan, minInterval, maxTimeout int64) error {
	sched, loc, err := j.Check(now)
	if err != nil {
		return err
	}
	if j.TimeoutSeconds > maxTimeout {
		return &cron.FieldError{Field: "timeoutSeconds", Reason: fmt.Sprintf("must be at most %d on the %s plan", maxTimeout, plan.Name), Limit: &maxTimeout}
	}
	if sched.MinInterval(now, loc) < time.Duration(minInterval)*time.Minute {
		return &cron.LimitError{Err: cron.ErrTooFrequent, Limit: minInterval, Plan: plan.Name}
	}
	next := sched.Next(now, loc)
	j.NextRunAt = &next
	return nil
}

// Delete removes a job and its runs, cancelling any in progress.
func (c *Crons) Delete(ctx context.Context, accountID, slug, name string) error {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return err
	}
	auditCron(ctx, name)
	return c.store.CronInTx(ctx, func(tx CronTx) error {
		j, err := tx.LockCronJob(ctx, app.ID, name)
		if err != nil {
			return err
		}
		if err := c.cancelInProgress(ctx, tx, app, j.ID, "the job was deleted"); err != nil {
			return err
		}
		return tx.DeleteCronJob(ctx, j.ID)
	})
}

// Runs lists a job's runs newest first.
func (c *Crons) Runs(ctx context.Context, accountID, slug, name string, limit int) ([]cron.Run, error) {
	if limit < 1 || limit > MaxCronRunsListed {
		return nil, &cron.FieldError{Field: "limit", Reason: fmt.Sprintf("must be from 1 to %d", MaxCronRunsListed)}
	}
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	j, err := c.store.CronJob(ctx, app.ID, name)
	if err != nil {
		return nil, err
	}
	return c.store.CronRuns(ctx, j.ID, limit)
}

// Cron run listing bounds.
const (
	DefaultCronRunsListed = 50
	MaxCronRunsListed     = cron.KeptTicks
)

// RunNow starts a manual run (scheduledFor now) under the job's policy.
func (c *Crons) RunNow(ctx context.Context, accountID, slug, name string) (cron.Run, error) {
	app, err := c.serviceApp(ctx, accountID, slug)
	if err != nil {
		return cron.Run{}, err
	}
	if err := c.svc.holdCheck(ctx, accountID); err != nil {
		return cron.Run{}, err
	}
	auditCron(ctx, name)
	var run cron.Run
	err = c.store.CronInTx(ctx, func(tx CronTx) error {
		j, err := tx.LockCronJob(ctx, app.ID, name)
		if err != nil {
			return err
		}
		now := c.svc.clock()
		run = cron.Run{ID: c.svc.newID(), JobID: j.ID, AppID: app.ID, Trigger: cron.Manual, ScheduledFor: now, CreatedAt: now}
		accessgate.Annotate(ctx, "runId", run.ID)
		return c.start(ctx, tx, app, j, &run, true)
	})
	return run, err
}

// start starts run (pending, written, StartCronRun sent) under the job's policy. A manual
// run that cannot start is refused with an error; a tick that cannot start leaves its row
// failed (no live deploy) or skipped (overlap).
func (c *Crons) start(ctx context.Context, tx CronTx, app App, j cron.Job, run *cron.Run, manual bool) error {
	now := c.svc.clock()
	live, err := tx.LiveDeployID(ctx, app.ID)
	if err != nil {
		return err
	}
	if live == "" {
		if manual {
			return cron.ErrNoLiveDeploy
		}
		run.Status, run.FinishedAt, run.Message = cron.Failed, &now, "the app has no live deploy to run from"
		_, err := tx.InsertCronRun(ctx, *run)
		return err
	}
	open, err := tx.InProgressCronRuns(ctx, app.ID, j.ID)
	if err != nil {
		return err
	}
	ok, replace := j.Policy.Admit(len(open))
	if !ok {
		if manual {
			return cron.ErrRunInProgress
		}
		run.Status, run.SkipReason = cron.Skipped, cron.SkipOverlap
		_, err := tx.InsertCronRun(ctx, *run)
		return err
	}
	run.Status, run.DeployID = cron.Pending, live
	inserted, err := tx.InsertCronRun(ctx, *run)
	if err != nil || !inserted {
		return err // !inserted: another scheduler fired this tick
	}
	if replace {
		if err := c.cancel(ctx, tx, app, open, "replaced by a newer run"); err != nil {
			return err
		}
	}
	return c.sendStart(ctx, tx, app, j, *run)
}

// cancelInProgress cancels the job's runs in progress (all of the app's when jobID is "").
func (c *Crons) cancelInProgress(ctx context.Context, tx CronTx, app App, jobID, why string) error {
	open, err := tx.InProgressCronRuns(ctx, app.ID, jobID)
	if err != nil {
		return err
	}
	return c.cancel(ctx, tx, app, open, why)
}

// cancel tells the zone to stop each run and marks it cancelled at once: the zone's own
// CANCELLED (or a late end) then changes nothing.
func (c *Crons) cancel(ctx context.Context, tx CronTx, app App, open []cron.Run, why string) error {
	now := c.svc.clock()
	for _, r := range open {
		if err := c.sendCancel(ctx, tx, app, r); err != nil {
			return err
		}
		r.Progress(cron.Cancelled, -1, why, now)
		if err := tx.UpdateCronRun(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
