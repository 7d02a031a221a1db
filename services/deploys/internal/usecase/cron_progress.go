package usecase

import (
	"context"
	"errors"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/cron"
)

// OnCronProgress applies a zone's report on a run (in the consumer's transaction). A run
// that is gone (its job deleted), belongs to another app or zone, or has already ended is
// left as it is.
func (c *Crons) OnCronProgress(ctx context.Context, tx CronTx, ev *zonev1.CronRunProgress) error {
	to, ok := map[zonev1.CronRunStatus]cron.Status{
		zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING:   cron.Running,
		zonev1.CronRunStatus_CRON_RUN_STATUS_SUCCEEDED: cron.Succeeded,
		zonev1.CronRunStatus_CRON_RUN_STATUS_FAILED:    cron.Failed,
		zonev1.CronRunStatus_CRON_RUN_STATUS_TIMED_OUT: cron.TimedOut,
		zonev1.CronRunStatus_CRON_RUN_STATUS_CANCELLED: cron.Cancelled,
	}[ev.GetStatus()]
	if !ok {
		return errors.New("cron run progress without a status")
	}
	r, err := tx.CronRun(ctx, ev.GetRunId())
	if errors.Is(err, cron.ErrJobNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	app, err := tx.App(ctx, r.AppID)
	if err != nil {
		return err
	}
	if r.AppID != ev.GetAppId() || (ev.GetZone() != "" && app.Zone != ev.GetZone()) {
		c.svc.log.WarnContext(ctx, "cron run report from the wrong app or zone ignored", "run_id", r.ID, "zone", ev.GetZone())
		return nil
	}
	at := c.svc.clock()
	if ev.GetAt() != nil {
		at = ev.GetAt().AsTime().UTC()
	}
	if !r.Progress(to, int(ev.GetExitCode()), ev.GetMessage(), at) {
		return nil
	}
	return tx.UpdateCronRun(ctx, r)
}
