package busapi

import (
	"context"
	"errors"
	"time"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// cronQueue is the zone's own queue of cron run commands: apart from the deploy commands,
// so a burst of runs never waits behind a deploy nor holds one up.
func cronQueue(zone string) string { return "zoneagent." + zone + ".cron" }

// CronSubscription consumes the control plane's cron run commands for this zone.
func CronSubscription(c *usecase.CronRuns) bus.Subscription {
	z := c.Zone()
	return bus.Subscription{
		Queue:  cronQueue(z),
		Keys:   []string{zonebus.CommandKey(z, zonebus.CommandCronRun), zonebus.CommandKey(z, zonebus.CommandCronCancel)},
		Handle: cronHandler(c),
	}
}

// cronHandler records a run (or its cancel) in the consumer's transaction; the runner is
// started or told once that transaction has committed, so a redelivery finds the run on
// record and starts nothing new.
func cronHandler(c *usecase.CronRuns) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var after func()
		var err error
		switch d.RoutingKey {
		case zonebus.CommandKey(c.Zone(), zonebus.CommandCronRun):
			var m zonev1.StartCronRun
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(err)
			}
			after, err = c.Start(ctx, store.Bind(tx), cronRunFrom(&m))
		case zonebus.CommandKey(c.Zone(), zonebus.CommandCronCancel):
			var m zonev1.CancelCronRun
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(err)
			}
			after, err = c.Cancel(ctx, store.Bind(tx), m.GetRunId(), m.GetAppId())
		default:
			return nil
		}
		if errors.Is(err, revision.ErrInvalid) {
			return bus.Permanent(err)
		}
		if err == nil && after != nil {
			tx.AfterCommit(after)
		}
		return err
	}
}

func cronRunFrom(m *zonev1.StartCronRun) revision.CronRun {
	return revision.CronRun{RunID: m.GetRunId(), AppID: m.GetAppId(), DeployID: m.GetDeployId(), Job: m.GetJob(),
		Command: m.GetCommand(), Timeout: time.Duration(m.GetTimeoutSeconds()) * time.Second}
}
