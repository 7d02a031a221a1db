package usecase

import (
	"context"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/cron"
)

// sendStart tells the app's zone to run the job's command from the run's deploy.
func (c *Crons) sendStart(ctx context.Context, tx CronTx, app App, j cron.Job, r cron.Run) error {
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandCronRun), &zonev1.StartCronRun{
		RunId: r.ID, AppId: app.ID, DeployId: r.DeployID, Job: j.Name, Command: j.Command, TimeoutSeconds: j.TimeoutSeconds,
	})
}

// sendCancel tells the app's zone to stop a run.
func (c *Crons) sendCancel(ctx context.Context, tx CronTx, app App, r cron.Run) error {
	if app.Zone == "" {
		return nil // an app known only from its tombstone: no zone ever got a run
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandCronCancel), &zonev1.CancelCronRun{RunId: r.ID, AppId: app.ID})
}
