package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/deploys/internal/cron"
	"tori.dev/services/deploys/internal/deploy"
)

// dueBatch is how many due jobs one scheduler transaction takes.
const dueBatch = 50

// FireDue fires every due tick: each job whose next tick has come is locked (skipping jobs
// another replica holds), each of its due ticks leaves a run row (run, or skipped with a
// reason), runs to start are sent to the zone through the outbox, and the job's next tick
// is set, all in one transaction per batch. It returns how many jobs it fired.
func (c *Crons) FireDue(ctx context.Context) (int64, error) {
	var fired int64
	for {
		n := 0
		err := c.store.CronInTx(ctx, func(tx CronTx) error {
			now := c.svc.clock()
			due, err := tx.DueCronJobs(ctx, now, dueBatch)
			if err != nil {
				return err
			}
			n = len(due)
			for _, j := range due {
				if err := c.fire(ctx, tx, j, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fired, err
		}
		fired += int64(n)
		if n < dueBatch {
			return fired, nil
		}
	}
}

func (c *Crons) fire(ctx context.Context, tx CronTx, j cron.Job, now time.Time) error {
	sched, err := cron.Parse(j.Schedule)
	var loc *time.Location
	if err == nil {
		loc, err = cron.Location(j.Timezone)
	}
	if err != nil {
		// Only a job written by an older rule could get here: stop its ticks, say why.
		c.svc.log.WarnContext(ctx, "cron job no longer valid; its ticks stop", "job_id", j.ID, "err", err.Error())
		j.NextRunAt = nil
		return tx.UpdateCronJob(ctx, j)
	}
	app, err := tx.App(ctx, j.AppID)
	if err != nil {
		return err
	}
	hold := false
	var he *deploy.HoldError
	if err := c.svc.holdCheck(ctx, app.AccountID); errors.As(err, &he) {
		hold = true
	} else if err != nil {
		return err
	}
	due := sched.DueTicks(*j.NextRunAt, now, loc)
	for _, d := range cron.Decide(due, now, j.Enabled, hold) {
		run := cron.Run{ID: c.svc.newID(), JobID: j.ID, AppID: j.AppID, Trigger: cron.Scheduled, ScheduledFor: d.ScheduledFor,
			Message: d.Message, CreatedAt: now}
		if d.Skip != "" {
			run.Status, run.SkipReason = cron.Skipped, d.Skip
			if _, err := tx.InsertCronRun(ctx, run); err != nil {
				return err
			}
			continue
		}
		if err := c.start(ctx, tx, app, j, &run, false); err != nil {
			return err
		}
	}
	j.NextRunAt = nil
	if !due.Next.IsZero() {
		j.NextRunAt = &due.Next
	}
	if err := tx.UpdateCronJob(ctx, j); err != nil {
		return err
	}
	return tx.PruneCronRuns(ctx, j.ID, cron.KeptTicks)
}

// FailUnreported fails the runs whose zone never reported: pending for longer than
// cron.PendingGrace, or running past their timeout plus cron.ReportGrace.
func (c *Crons) FailUnreported(ctx context.Context) (int64, error) {
	now := c.svc.clock()
	ids, err := c.store.UnreportedCronRuns(ctx, now, now.Add(-cron.PendingGrace), cron.ReportGrace, 100)
	if err != nil {
		return 0, err
	}
	var failed int64
	for _, id := range ids {
		err := c.store.CronInTx(ctx, func(tx CronTx) error {
			r, err := tx.CronRun(ctx, id)
			if err != nil {
				return err
			}
			if !r.Progress(cron.Failed, -1, cron.NoReportMessage, now) {
				return nil
			}
			failed++
			return tx.UpdateCronRun(ctx, r)
		})
		if err != nil && !errors.Is(err, cron.ErrJobNotFound) {
			return failed, err
		}
	}
	return failed, nil
}

// RemoveCronsOfDeletedApps deletes the cron jobs of deleted apps, cancelling their runs in
// progress. The scheduler already ignores such jobs; this clears them away.
func (c *Crons) RemoveCronsOfDeletedApps(ctx context.Context) (int64, error) {
	ids, err := c.store.AppsWithCronsDeleted(ctx, 50)
	if err != nil {
		return 0, err
	}
	var done int64
	for _, appID := range ids {
		err := c.store.CronInTx(ctx, func(tx CronTx) error {
			app, err := tx.App(ctx, appID)
			if err != nil {
				return err
			}
			if err := c.cancelInProgress(ctx, tx, app, "", "the app was deleted"); err != nil {
				return err
			}
			return tx.DeleteCronJobsOfApp(ctx, appID)
		})
		if err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
