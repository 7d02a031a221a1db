package busapi

import (
	"context"
	"fmt"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// QueueCronReports is the zones' reports on cron runs.
const QueueCronReports = "deploys.cron_reports"

// BindCronTx makes a consumer's transaction the cron use cases' (store.BindCron).
type BindCronTx func(tx bus.Tx) usecase.CronTx

// CronSubscriptions are the cron use cases' consumers.
func CronSubscriptions(crons *usecase.Crons, bind BindCronTx) []bus.Subscription {
	return []bus.Subscription{
		{Queue: QueueCronReports, Keys: []string{zonebus.KeyCronProgressed}, Handle: cronProgressHandler(crons, bind)},
	}
}

func cronProgressHandler(crons *usecase.Crons, bind BindCronTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev zonev1.CronRunProgress
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if ev.GetStatus() == zonev1.CronRunStatus_CRON_RUN_STATUS_UNSPECIFIED {
			return bus.Permanent(fmt.Errorf("cron run progress for %q without a status", ev.GetRunId()))
		}
		// The zone that published it, which the broker vouches for, not the one it names.
		if zone, ok := bus.ZoneOf(d.Publisher); ok {
			ev.Zone = zone
		}
		if err := crons.OnCronProgress(ctx, bind(tx), &ev); err != nil {
			return err
		}
		return nil
	}
}
